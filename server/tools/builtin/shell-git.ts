// Which git commands the shell tool may run without asking, and how they run: git obeys the
// repository's own configuration, which the agent can write (`.git/config`, or `HEAD` + `config`
// in any folder), and that configuration runs programs — core.fsmonitor, hooks, pagers,
// gpg.program, diff drivers and textconv, filter drivers. Flags and environment neutralise the
// ones with fixed names; filter and diff drivers have names the repository chooses, so only
// sub-commands that never read work-tree files through them are read-only. `git status` and a
// plain `git diff` compare the work tree (clean filters run even with every override), so they
// always ask, and so does `git grep`: it reads the work tree, which a planted core.worktree can
// put outside the workspace. A read can also reach a remote: in a partial clone a missing object
// is fetched from the promisor remote the configuration names, by its uploadpack, ssh command,
// `ext::` URL or remote helper, asking its credential helper; so no transport is allowed at all.
import type { SimpleCommand } from "../../shell/types";

type Args = readonly string[];
const any = () => true;
/** GNU getopt_long and git's parse-options take any unambiguous prefix of a long option (`sort
 *  --out=f` is --output): a prefix of a bad option counts as that option, even an ambiguous one. */
export const abbreviates = (x: string, long: string) => {
  const name = x.split("=")[0];
  return name.length > 2 && name.startsWith("--") && long.startsWith(name);
};
const onlyFlags =
  (...ok: string[]) =>
  (a: Args) =>
    a.every((x) => ok.includes(x));

const GIT_READ: Record<string, (a: Args) => boolean> = {
  log: any,
  show: any,
  shortlog: (a) => a.length > 0, // with no revision it reads its input
  // Index against a commit or tree against tree: no work-tree file goes through a filter.
  diff: (a) => a.includes("--cached") || a.includes("--staged"),
  // Only the index: a planted core.worktree can put the work tree anywhere on the machine.
  "ls-files": (a) =>
    !a.some(
      (x) =>
        /^-[a-zA-Z]*[mtoidk]/.test(x) ||
        [
          "--modified",
          "--debug",
          "--with-tree",
          "--others",
          "--ignored",
          "--directory",
          "--deleted",
          "--killed",
          "--eol",
        ].some((l) => x.startsWith(l) || abbreviates(x, l)),
    ),
  "ls-tree": any,
  "rev-parse": any,
  "cat-file": (a) => a.length > 0 && a.every((x) => !x.startsWith("-") || ["-t", "-s", "-p", "-e"].includes(x)),
  describe: any,
  branch: onlyFlags("-a", "-r", "-v", "-vv", "--list", "--all", "--remotes", "--show-current", "--no-color"),
  tag: onlyFlags("-l", "--list"),
  remote: onlyFlags("-v", "--verbose"),
  stash: (a) => a.length === 1 && a[0] === "list",
  reflog: (a) => a.length === 0 || a[0] === "show",
  config: (a) =>
    a.length > 0 && ["--get", "--get-all", "--list", "-l", "--get-regexp"].includes(a[0]) && !a.includes("-e"),
};

// Options of any sub-command that write, run a program, read outside the repository's objects
// or reach the work tree through filters. Sub-commands built on parse-options (describe, config,
// ls-files) take any unambiguous prefix of a long option: `git describe --dirt` runs clean filters.
const FORBIDDEN_LONG = [
  "--output",
  "--ext-diff",
  "--textconv",
  "--filters",
  "--open-files-in-pager",
  "--exec",
  "--upload-pack",
  "--receive-pack",
  "--no-index",
  "--dirty",
  "--broken",
  "--contents",
  "--git-dir",
  "--work-tree",
  "--batch",
  "--edit",
  // Diffs of merges made by re-merging run the merge drivers the repository names; a
  // submodule's diff starts a git in it without --no-ext-diff; the alternates' refs come from
  // core.alternateRefsCommand.
  "--remerge-diff",
  "--diff-merges",
  "--submodule",
  "--alternate-refs",
];
const forbidden = (x: string) => x.startsWith("-O") || FORBIDDEN_LONG.some((l) => x.startsWith(l) || abbreviates(x, l));

// Global options allowed before the sub-command: none of them changes which repository or
// configuration git uses (`-C`, `-c`, `--git-dir`, `--work-tree`, `--exec-path` all do).
const GLOBAL_OK = new Set(["--no-pager", "-P", "--no-optional-locks", "--no-replace-objects", "--literal-pathspecs"]);

/** `git …` (args after `git`) that only reads, once run the neutralised way (gitNeutralised). */
export function gitIsReadOnly(args: Args): boolean {
  let i = 0;
  while (i < args.length && args[i].startsWith("-")) {
    if (!GLOBAL_OK.has(args[i])) return false;
    i++;
  }
  const sub = args[i];
  if (!sub || !Object.hasOwn(GIT_READ, sub)) return false;
  const rest = args.slice(i + 1);
  if (rest.some(forbidden)) return false;
  return GIT_READ[sub](rest);
}

// Configuration with fixed names that runs programs or finds another repository; given on the
// command line it beats every file git reads. Hooks point at a folder that does not exist.
const OVERRIDES = [
  "core.fsmonitor=false",
  "core.hooksPath=/dev/null/none",
  "core.pager=cat",
  "core.attributesFile=/dev/null",
  "core.untrackedCache=false",
  "gpg.program=false",
  "gpg.ssh.program=false",
  "gpg.x509.program=false",
  "log.showSignature=false",
  "safe.bareRepository=explicit",
  "diff.external=false",
  // `-m` re-merges under log.diffMerges=remerge; diff.submodule=diff runs a git in the submodule.
  "log.diffMerges=first-parent",
  "diff.submodule=short",
  // A fetch's programs, should one start anyway (see REMOTE_ENV).
  "protocol.allow=never",
  "credential.helper=",
];
// No lazy fetch of a missing object (git ≥ 2.39.4 and 2.45), and for a git without that no
// transport at all: an empty GIT_ALLOW_PROTOCOL allows none, and unlike `protocol.allow` no
// `protocol.<name>.allow` of the repository's can undo it. No prompt, no askpass program, and
// the environment's ssh command beats the repository's core.sshCommand.
const REMOTE_ENV = "GIT_NO_LAZY_FETCH=1 GIT_ALLOW_PROTOCOL= GIT_TERMINAL_PROMPT=0 GIT_ASKPASS= GIT_SSH_COMMAND=false";
const ENV = `GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null GIT_OPTIONAL_LOCKS=0 GIT_PAGER=cat PAGER=cat ${REMOTE_ENV}`;
// Per sub-command: no external diff program, no textconv driver.
const SUB_FLAGS: Record<string, string> = {
  log: "--no-ext-diff --no-textconv",
  show: "--no-ext-diff --no-textconv",
  diff: "--no-ext-diff --no-textconv",
  reflog: "--no-ext-diff --no-textconv",
};

/**
 * `line` with every git command of it run the neutralised way: configuration that runs programs
 * overridden, no pager, no external diff or textconv, no fetch. Only for lines the classifier called
 * read-only, whose git commands are all plain words of the line itself (no wrapper, no
 * substitution), so each edit lands on a word boundary.
 */
export function neutraliseGit(line: string, commands: readonly SimpleCommand[]): string {
  const edits: { at: number; text: string }[] = [];
  for (const c of commands) {
    if (c.argv[0] !== "git" || !c.ranges || c.ranges.length !== c.argv.length) continue;
    edits.push({ at: c.ranges[0].start, text: `${ENV} ` });
    edits.push({ at: c.ranges[0].end, text: ` --no-pager ${OVERRIDES.map((o) => `-c ${o}`).join(" ")}` });
    const sub = c.argv.findIndex((a, i) => i > 0 && !a.startsWith("-"));
    const flags = sub > 0 && Object.hasOwn(SUB_FLAGS, c.argv[sub]) ? SUB_FLAGS[c.argv[sub]] : undefined;
    // `git reflog show …` takes the flags after its own sub-command (before it, `show` is a revision).
    const after = c.argv[sub] === "reflog" && c.argv[sub + 1] === "show" ? sub + 1 : sub;
    if (flags) edits.push({ at: c.ranges[after].end, text: ` ${flags}` });
  }
  edits.sort((a, b) => b.at - a.at);
  let out = line;
  for (const e of edits) out = out.slice(0, e.at) + e.text + out.slice(e.at);
  return out;
}
