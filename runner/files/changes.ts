// The person's view of the workspace's uncommitted changes (the IDE's Changes panel): the
// changed files with their kind of change and line counts, read from the same diff git_diff
// and the diff budget use, and a changed file's earlier version for a side-by-side diff.
import { PersonChanges, PERSON_FILE_LIMITS, PERSON_FILE_OPS } from "../../server/protocol/person-file-ops";
import { defineOp } from "../ops";
import { git, type GitHost } from "../workspace/git";
import { patchSections, unquoteGitPath } from "../workspace/git-quote";
import { looksBinary, utf8Text } from "./text";

type ChangedFile = PersonChanges["files"][number];

/** The path of a `diff --git a/P b/P` line (no renames: both sides are the same path). */
function pathOf(header: string): string {
  const rest = header.slice("diff --git ".length);
  if (rest.startsWith('"')) {
    // git quotes a path with special characters, C-style with octal bytes (git-quote.ts).
    const quoted = /^"((?:[^"\\]|\\.)*)"/.exec(rest)?.[1] ?? "";
    return (unquoteGitPath(quoted) ?? quoted).replace(/^a\//, "");
  }
  return rest.slice(2, 2 + (rest.length - 5) / 2);
}

/** One entry per file section of a unified diff. */
export function changedFiles(diff: string): ChangedFile[] {
  const files: ChangedFile[] = [];
  for (const section of patchSections(diff)) {
    const lines = section.split("\n");
    const file: ChangedFile = { path: pathOf(lines[0]), status: "modified", added: 0, removed: 0 };
    for (const l of lines.slice(1)) {
      if (l.startsWith("new file mode")) file.status = "added";
      else if (l.startsWith("deleted file mode")) file.status = "deleted";
      else if (l.startsWith("Binary files ")) file.binary = true;
      else if (l.startsWith("+") && !l.startsWith("+++ ")) file.added++;
      else if (l.startsWith("-") && !l.startsWith("--- ")) file.removed++;
    }
    files.push(file);
  }
  return files.sort((a, b) => a.path.localeCompare(b.path));
}

/** The checked-out branch, or the commit a detached HEAD points at. */
async function branchOf(host: GitHost): Promise<string | undefined> {
  const name = (await git(host, ["symbolic-ref", "-q", "--short", "HEAD"])).stdout.trim();
  if (name) return name;
  const sha = (await git(host, ["rev-parse", "--short", "HEAD"])).stdout.trim();
  return sha ? `detached at ${sha}` : undefined;
}

export const ideChanges = defineOp({
  input: PERSON_FILE_OPS.ide_changes,
  async run(_input, ctx) {
    const { text, overflow, mode } = await ctx.workspace.diff.text(undefined, 32 * 1024 * 1024);
    const meta: PersonChanges = { mode, files: changedFiles(text), truncated: overflow };
    if (mode === "git") meta.branch = await branchOf(ctx.workspace);
    return { ok: true, output: `${meta.files.length} changed file(s)`, meta };
  },
});

export const ideOriginal = defineOp({
  input: PERSON_FILE_OPS.ide_original,
  async run(input, ctx) {
    const target = await ctx.workspace.resolve(input.path, "read");
    const before = await ctx.workspace.diff.original(target.rel);
    if (before === null) return { ok: true, output: "", meta: { existed: false } };
    if (before.length > PERSON_FILE_LIMITS.maxOpenBytes)
      return { ok: false, output: `${target.rel} was ${before.length} bytes, larger than the editor opens` };
    const text = looksBinary(before) ? undefined : utf8Text(before);
    if (text === undefined) return { ok: true, output: "", meta: { existed: true, binary: true } };
    return { ok: true, output: text, meta: { existed: true } };
  },
});
