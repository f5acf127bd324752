// read_file: numbered lines with offset/limit, bounded, recorded in the session's read ledger.
import { FILE_LIMITS, ReadFileInput } from "../../server/protocol/file-ops";
import { sha256 } from "../workspace/ledger";
import { defineOp } from "../ops";
import { looksBinary, utf8Text } from "./text";

const MAX_FILE_BYTES = 50 * 1024 * 1024;

export function splitLines(text: string): string[] {
  if (text === "") return [];
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}

export const numbered = (n: number, line: string) => `${String(n).padStart(6)}\t${line}`;

export const readFileOp = defineOp({
  input: ReadFileInput,
  async run(input, ctx) {
    const target = await ctx.workspace.resolve(input.path, "read");
    const file = target.exists
      ? await ctx.workspace.files.readFile(target.rel, { follow: true, maxBytes: MAX_FILE_BYTES })
      : { kind: "missing" as const };
    if (file.kind === "missing") return { ok: false, output: `${input.path} does not exist` };
    if (file.kind === "dir")
      return { ok: false, output: `${target.rel || "."} is a directory; use list_files to see its contents` };
    if (file.kind === "large")
      return {
        ok: false,
        output: `${target.rel} is ${file.size} bytes, too large to read (limit ${MAX_FILE_BYTES}); use search_text to find what you need`,
      };
    if (file.kind !== "file") return { ok: false, output: `${target.rel} is not a regular file` };
    const data = file.data;
    if (looksBinary(data))
      return { ok: false, output: `${target.rel} is a binary file (${data.length} bytes); read_file shows text only` };
    const hash = sha256(data);
    const text = utf8Text(data);
    const lines = splitLines(text ?? data.toString("utf8"));
    const total = lines.length;
    if (total === 0) {
      ctx.workspace.ledger.recordRead(ctx.sessionId, target.rel, hash, 0, 1, 0);
      return {
        ok: true,
        output: "(empty file)",
        meta: { path: target.rel, totalLines: 0, from: 0, to: 0, truncated: false },
      };
    }
    const from = input.offset ?? 1;
    if (from > total)
      return { ok: false, output: `offset ${from} is past the end of ${target.rel}, which has ${total} lines` };
    const limit = input.limit ?? FILE_LIMITS.readDefaultLines;
    const out: string[] = [];
    let bytes = 0;
    let cutLines = 0;
    let to = from - 1;
    for (let n = from; n <= total && n < from + limit; n++) {
      let line = lines[n - 1].replace(/\r$/, "");
      if (line.length > FILE_LIMITS.readMaxLineChars) {
        line = `${line.slice(0, FILE_LIMITS.readMaxLineChars)}… [line cut: ${line.length} characters]`;
        cutLines++;
      }
      const row = numbered(n, line);
      if (bytes + row.length + 1 > FILE_LIMITS.readMaxBytes && out.length > 0) break;
      out.push(row);
      bytes += row.length + 1;
      to = n;
    }
    ctx.workspace.ledger.recordRead(ctx.sessionId, target.rel, hash, total, from, to);
    const partial = from > 1 || to < total;
    if (to < total) out.push(`[showing lines ${from}-${to} of ${total}; continue with offset=${to + 1}]`);
    else if (from > 1) out.push(`[showing lines ${from}-${to} of ${total}]`);
    if (cutLines) out.push(`[${cutLines} long line(s) cut at ${FILE_LIMITS.readMaxLineChars} characters]`);
    if (text === undefined)
      out.push(`[not UTF-8: its invalid bytes are shown as \ufffd; edit_file and apply_patch refuse this file]`);
    return {
      ok: true,
      output: out.join("\n"),
      meta: { path: target.rel, totalLines: total, from, to, truncated: partial },
    };
  },
});
