// git's own commands (git 2.39's `git --list-cmds=main,nohelpers`, and a few of later releases and
// common add-ons). Any other word in a git command's sub-command place may be an alias the
// repository's configuration defines (`alias.p = push`, planted by an earlier write, or given
// with `-c alias.p=push`), which runs whatever it names: a rule on a git sub-command cannot rule
// it out (policy/shell.ts).
export const GIT_COMMANDS: ReadonlySet<string> = new Set(
  (
    "add am annotate apply archive bisect blame branch bugreport bundle cat-file check-attr " +
    "check-ignore check-mailmap check-ref-format checkout checkout-index cherry cherry-pick clean " +
    "clone column commit commit-graph commit-tree config count-objects credential credential-cache " +
    "credential-store daemon describe diagnose diff diff-files diff-index diff-tree difftool " +
    "fast-export fast-import fetch fetch-pack filter-branch fmt-merge-msg for-each-ref for-each-repo " +
    "format-patch fsck fsck-objects gc get-tar-commit-id grep hash-object help hook http-backend " +
    "http-fetch http-push imap-send index-pack init init-db instaweb interpret-trailers log ls-files " +
    "ls-remote ls-tree mailinfo mailsplit maintenance merge merge-base merge-file merge-index " +
    "merge-octopus merge-one-file merge-ours merge-recursive merge-recursive-ours " +
    "merge-recursive-theirs merge-resolve merge-subtree merge-tree mergetool mktag mktree " +
    "multi-pack-index mv name-rev notes pack-objects pack-redundant pack-refs patch-id pickaxe prune " +
    "prune-packed pull push quiltimport range-diff read-tree rebase receive-pack reflog remote " +
    "remote-ext remote-fd remote-ftp remote-ftps remote-http remote-https repack replace " +
    "request-pull rerere reset restore rev-list rev-parse revert rm send-pack shell shortlog show " +
    "show-branch show-index show-ref sparse-checkout stage stash status stripspace submodule subtree " +
    "switch symbolic-ref tag unpack-file unpack-objects update-index update-ref update-server-info " +
    "upload-archive upload-pack var verify-commit verify-pack verify-tag version whatchanged " +
    "worktree write-tree " +
    "replay backfill last-modified lfs gui citool"
  ).split(/\s+/),
);
