// ide_commit: the Changes panel's Commit. Stages and commits everything changed inside the
// workspace folder (a workspace in a subfolder of a repository commits that subfolder only).
// Repository hooks do not run, nor any other program the repository's configuration names
// (workspace/git.ts): they are the agent's to plant, and a commit that needs them is made from
// the terminal. With a sandbox, git runs in it and writes only a repository inside the
// workspace: a workspace in a subfolder of a repository then commits from the terminal.
import { PERSON_FILE_OPS, type PersonCommit } from "../../server/protocol/person-file-ops";
import { git, identityArgs } from "../workspace/git";
import { defineOp } from "../ops";

/** git's complaint, with what to do about the one people meet most. */
export function explainGitError(stderr: string): string {
  if (/Please tell me who you are|unable to auto-detect email/i.test(stderr)) {
    return 'git does not know who is committing: set it in the terminal (git config --global user.name "Your Name" and git config --global user.email you@example.com), then commit again.';
  }
  return stderr.trim().split("\n").slice(0, 6).join("\n") || "git commit failed";
}

export const ideCommit = defineOp({
  input: PERSON_FILE_OPS.ide_commit,
  async run(input, ctx) {
    const root = ctx.workspace;
    if (!(await ctx.workspace.diff.inGit())) {
      return {
        ok: false,
        output:
          "The workspace is not in a git repository with a first commit, so there is nothing to commit to (git init and a first commit in the terminal start one).",
      };
    }
    // Submodules left out of `add`: git runs `git status` in each to see whether it is dirty, a
    // process the sandboxed git may not start (workspace/git.ts); their new commits are staged
    // from the terminal.
    const staged = await git(root, ["ls-files", "-s", "-z", "--", "."]);
    const gitlinks = staged.stdout
      .split("\0")
      .map((l) => /^160000 [0-9a-f]+ \d+\t(.*)$/s.exec(l)?.[1])
      .filter((p): p is string => p !== undefined)
      .map((p) => `:(exclude,literal,top)${p}`);
    const add = await git(root, ["add", "-A", "--", ".", ...gitlinks], { writes: true, worktree: true });
    if (add.code !== 0) return { ok: false, output: `git add failed: ${explainGitError(add.stderr)}` };
    if ((await git(root, ["diff", "--cached", "--quiet", "--no-ext-diff", "--no-textconv", "--", "."])).code === 0)
      return { ok: false, output: "Nothing to commit: the workspace has no changes." };
    const commit = await git(
      root,
      [...(await identityArgs(root)), "commit", "-q", "--no-verify", "--no-gpg-sign", "-m", input.message, "--", "."],
      { writes: true, worktree: true },
    );
    if (commit.code !== 0) return { ok: false, output: explainGitError(commit.stderr || commit.stdout) };
    const sha = (await git(root, ["rev-parse", "--short", "HEAD"])).stdout.trim();
    const meta: PersonCommit = { commit: sha };
    return { ok: true, output: `committed ${sha}: ${input.message.split("\n")[0]}`, meta };
  },
});
