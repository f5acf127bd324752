// edit_file and write_file: both require a complete, unchanged read of an existing file (the
// ledger), and both go through Workspace.write (atomic, budgeted, announced). planEdit and
// planWrite work out the change without writing it, for the op and for its preview
// (preview.ts: the diff an approval card shows). After a write, both answer the diff of what was
// actually applied in meta.diff (bounded, for the tool card; never part of the model's output).
import { EditFileInput, WriteFileInput } from "../../server/protocol/file-ops";
import { readNoFollow } from "../workspace/atomic";
import { sha256 } from "../workspace/ledger";
import { defineOp, type OpContext } from "../ops";
import { changeDiff } from "./change-diff";
import { numbered, splitLines } from "./read";
import { utf8Text } from "./text";

/** Reads a file for a change and checks the ledger; returns the refusal text when not allowed. */
export async function readForChange(ctx: OpContext, rel: string) {
  const before = await readNoFollow(ctx.workspace.files, rel);
  if (!before) return { before: null, hash: null, refusal: undefined };
  const hash = sha256(before.data);
  const check = ctx.workspace.ledger.check(ctx.sessionId, rel, hash);
  return { before, hash, refusal: check.ok ? undefined : check.reason };
}

/** Why an edit of a file that is not UTF-8 is refused: it would replace the other bytes. */
export const notUtf8 = (rel: string) =>
  `${rel} is not UTF-8 text: editing it as text would replace its other bytes. Change it with a shell command (e.g. sed, iconv), or rewrite it whole with write_file`;

export interface Refusal {
  ok: false;
  output: string;
}
/** A change worked out and allowed: the file's text now (null: a new file) and after. */
export interface PlannedChange {
  ok: true;
  target: Awaited<ReturnType<OpContext["workspace"]["resolve"]>>;
  hash: string | null;
  before: string | null;
  updated: string;
}

const lineAt = (text: string, index: number) => linesAt(text, [index])[0];

/** The 1-based lines of the first `max` of the ascending offsets, in one pass over the text
 *  (one slice and split per offset made an edit with 20,000 matches take seconds). */
function linesAt(text: string, offsets: number[], max = offsets.length): number[] {
  const lines: number[] = [];
  let line = 1;
  let from = 0;
  for (const at of offsets.slice(0, max)) {
    for (let nl = text.indexOf("\n", from); nl !== -1 && nl < at; nl = text.indexOf("\n", from)) {
      line++;
      from = nl + 1;
    }
    lines.push(line);
  }
  return lines;
}

function occurrences(text: string, needle: string): number[] {
  const at: number[] = [];
  for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + needle.length)) at.push(i);
  return at;
}

/** What an edit_file would write, without writing it: the one place its rules live. */
export async function planEdit(
  input: EditFileInput,
  ctx: OpContext,
): Promise<Refusal | (PlannedChange & { at: number[]; newText: string })> {
  const target = await ctx.workspace.resolve(input.path, "write");
  if (!target.exists) return { ok: false, output: `${input.path} does not exist; use write_file to create a new file` };
  const { before, hash, refusal } = await readForChange(ctx, target.rel);
  if (!before) return { ok: false, output: `${input.path} does not exist; use write_file to create a new file` };
  if (refusal) return { ok: false, output: refusal };
  const text = utf8Text(before.data);
  if (text === undefined) return { ok: false, output: notUtf8(target.rel) };
  let oldText = input.old_string;
  let newText = input.new_string;
  // The model writes \n; a CRLF file keeps its line endings.
  if (!text.includes(oldText) && text.includes("\r\n") && !oldText.includes("\r\n")) {
    oldText = oldText.replace(/\n/g, "\r\n");
    newText = newText.replace(/\r?\n/g, "\r\n");
  }
  if (oldText === newText) return { ok: false, output: "old_string and new_string are identical; nothing to change" };
  const at = occurrences(text, oldText);
  if (at.length === 0) {
    const trimmed = input.old_string.trim();
    const near = trimmed && trimmed !== input.old_string ? linesAt(text, occurrences(text, trimmed), 10) : [];
    const hint = near.length
      ? ` Text without the surrounding whitespace occurs at line(s) ${near.slice(0, 10).join(", ")}; check indentation and blank lines.`
      : "";
    return {
      ok: false,
      output: `old_string was not found in ${target.rel} (0 occurrences); it must match the file exactly, including whitespace and indentation.${hint}`,
    };
  }
  if (at.length > 1 && !input.replace_all) {
    const shown = linesAt(text, at, 20).join(", ") + (at.length > 20 ? ", …" : "");
    return {
      ok: false,
      output: `old_string occurs ${at.length} times in ${target.rel} (at lines ${shown}); include more surrounding lines so it matches exactly once, or set replace_all to true`,
    };
  }
  const updated = input.replace_all
    ? text.split(oldText).join(newText)
    : text.slice(0, at[0]) + newText + text.slice(at[0] + oldText.length);
  return { ok: true, target, hash, before: text, updated, at, newText };
}

export const editFileOp = defineOp({
  input: EditFileInput,
  async run(input, ctx) {
    const plan = await planEdit(input, ctx);
    if (!plan.ok) return plan;
    const { target, hash, before, updated, at, newText } = plan;
    const { version } = await ctx.workspace.write(ctx.sessionId, [
      { path: target, content: updated, expectHash: hash },
    ]);
    const first = lineAt(updated, at[0]);
    const newLines = splitLines(updated);
    const span = Math.max(1, splitLines(newText).length);
    const from = Math.max(1, first - 2);
    const to = Math.min(newLines.length, first + span + 1);
    const snippet = newLines
      .slice(from - 1, to)
      .map((l, i) => numbered(from + i, l))
      .join("\n");
    const count = input.replace_all ? `${at.length} occurrence${at.length === 1 ? "" : "s"}` : "1 occurrence";
    return {
      ok: true,
      output: `Edited ${target.rel}: replaced ${count}.\n${snippet}`,
      meta: { path: target.rel, version, replacements: at.length, diff: changeDiff(target.rel, before, updated) },
    };
  },
});

/** What a write_file would write, without writing it. */
export async function planWrite(input: WriteFileInput, ctx: OpContext): Promise<Refusal | PlannedChange> {
  const target = await ctx.workspace.resolve(input.path, "write");
  if (target.exists && ctx.workspace.files.lstat(target.rel)?.stats.isDirectory())
    return { ok: false, output: `${target.rel} is a directory` };
  const { before, hash, refusal } = await readForChange(ctx, target.rel);
  if (before && refusal)
    return { ok: false, output: `${refusal} (write_file overwrites existing files only after a complete read)` };
  return { ok: true, target, hash, before: before ? before.data.toString("utf8") : null, updated: input.content };
}

export const writeFileOp = defineOp({
  input: WriteFileInput,
  async run(input, ctx) {
    const plan = await planWrite(input, ctx);
    if (!plan.ok) return plan;
    const { target, hash, before } = plan;
    const { version } = await ctx.workspace.write(ctx.sessionId, [
      { path: target, content: input.content, expectHash: hash },
    ]);
    const lines = splitLines(input.content).length;
    const verb = before !== null ? "Overwrote" : "Created";
    return {
      ok: true,
      output: `${verb} ${target.rel} (${lines} line${lines === 1 ? "" : "s"}, ${Buffer.byteLength(input.content)} bytes).`,
      meta: {
        path: target.rel,
        version,
        created: before === null,
        diff: changeDiff(target.rel, before, input.content),
      },
    };
  },
});
