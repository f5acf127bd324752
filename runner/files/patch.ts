// apply_patch: a unified diff over one or more files, applied all hunks or none. Every file it
// modifies or deletes must have been read completely and be unchanged (the ledger). Its result
// carries the diff it applied, worked out from the files (fuzzy hunks land where they landed),
// as edit_file's does; the approval card shows the same diff beforehand (preview.ts).
import { applyPatch, parsePatch, type StructuredPatch } from "diff";
import { ApplyPatchInput } from "../../server/protocol/file-ops";
import type { FileChange } from "../workspace/workspace";
import { defineOp, type OpContext } from "../ops";
import { capDiff, changeDiff, DIFF_MAX_CHARS } from "./change-diff";
import { notUtf8, readForChange, type Refusal } from "./edit";
import { utf8Text } from "./text";

const DEV_NULL = "/dev/null";

function stripPrefix(name: string | undefined, git: boolean): string | undefined {
  if (!name) return undefined;
  const clean = name.replace(/\t.*$/, "").trim();
  if (clean === DEV_NULL) return DEV_NULL;
  return git && /^[ab]\//.test(clean) ? clean.slice(2) : clean;
}

const hunkHeader = (h: StructuredPatch["hunks"][number]) =>
  `@@ -${h.oldStart},${h.oldLines} +${h.newStart},${h.newLines} @@`;

/** Which hunk fails on its own against the original: the one to name in the error. */
function failingHunk(text: string, file: StructuredPatch): string {
  for (let i = 0; i < file.hunks.length; i++) {
    if (applyPatch(text, { ...file, hunks: [file.hunks[i]] }) === false)
      return `hunk ${i + 1} (${hunkHeader(file.hunks[i])})`;
  }
  return "the hunks together (they overlap or are out of order)";
}

/** The patch worked out against the files, nothing written: each file's new content (null:
 *  deleted) and the unified diff of what would change, with the files' real line numbers. */
export interface PlannedPatch {
  ok: true;
  changes: FileChange[];
  summary: string[];
  diff: string;
}

/** What an apply_patch would write, without writing it: the one place its rules live. */
export async function planPatch(
  input: ApplyPatchInput,
  ctx: OpContext,
  diffMaxChars = DIFF_MAX_CHARS,
): Promise<Refusal | PlannedPatch> {
  let files: StructuredPatch[];
  try {
    files = parsePatch(input.patch);
  } catch (err) {
    return { ok: false, output: `the patch could not be parsed: ${(err as Error).message}` };
  }
  files = files.filter((f) => f.hunks.length > 0 || f.oldFileName || f.newFileName);
  if (files.length === 0 || files.every((f) => f.hunks.length === 0)) {
    return { ok: false, output: "no hunks found: give a unified diff with ---/+++ headers and @@ -a,b +c,d @@ hunks" };
  }
  // git-style a/ b/ prefixes are stripped when both sides carry them (or one side is /dev/null).
  const git = files.every((f) =>
    [f.oldFileName, f.newFileName].every((n) => !n || n === DEV_NULL || /^[ab]\//.test(n)),
  );
  const changes: FileChange[] = [];
  const seen = new Set<string>();
  const summary: string[] = [];
  const diffs: string[] = [];
  for (const file of files) {
    const oldName = stripPrefix(file.oldFileName, git);
    const newName = stripPrefix(file.newFileName, git);
    if (!oldName && !newName) return { ok: false, output: "a file section of the patch has no ---/+++ file names" };
    if (oldName && newName && oldName !== DEV_NULL && newName !== DEV_NULL && oldName !== newName) {
      return {
        ok: false,
        output: `renames are not supported (${oldName} → ${newName}); delete the old file and create the new one in separate sections`,
      };
    }
    const creating = oldName === DEV_NULL;
    const deleting = newName === DEV_NULL;
    const name = (creating ? newName : oldName) ?? newName!;
    const target = await ctx.workspace.resolve(name, "write");
    if (seen.has(target.rel))
      return { ok: false, output: `${target.rel} appears twice in the patch; combine its hunks into one section` };
    seen.add(target.rel);
    const { before, hash, refusal } = await readForChange(ctx, target.rel);
    if (creating && before)
      return { ok: false, output: `the patch creates ${target.rel}, but it already exists; nothing was changed` };
    if (!creating && !before) return { ok: false, output: `${target.rel} does not exist; nothing was changed` };
    if (refusal) return { ok: false, output: `${refusal}; nothing was changed` };
    const original = before ? utf8Text(before.data) : "";
    if (original === undefined) return { ok: false, output: `${notUtf8(target.rel)}; nothing was changed` };
    const result = applyPatch(original, file);
    if (result === false) {
      return {
        ok: false,
        output: `${failingHunk(original, file)} of ${target.rel} does not apply: its context or removed lines do not match the file. Nothing was changed; read the file again and regenerate the patch.`,
      };
    }
    if (deleting && result !== "")
      return {
        ok: false,
        output: `the patch deletes ${target.rel} but does not remove all of its content; nothing was changed`,
      };
    changes.push({ path: target, content: deleting ? null : result, expectHash: hash });
    summary.push(
      `${creating ? "created" : deleting ? "deleted" : "modified"} ${target.rel} (${file.hunks.length} hunk${file.hunks.length === 1 ? "" : "s"})`,
    );
    // Uncut per file: the whole is cut once, below.
    diffs.push(changeDiff(target.rel, creating ? null : original, deleting ? null : result, Infinity));
  }
  return { ok: true, changes, summary, diff: capDiff(diffs.join(""), diffMaxChars) };
}

export const applyPatchOp = defineOp({
  input: ApplyPatchInput,
  async run(input, ctx) {
    const plan = await planPatch(input, ctx);
    if (!plan.ok) return plan;
    const { version } = await ctx.workspace.write(ctx.sessionId, plan.changes);
    return {
      ok: true,
      output: `Patch applied: ${plan.summary.join("; ")}.`,
      meta: { version, paths: plan.changes.map((c) => c.path.rel), diff: plan.diff },
    };
  },
});
