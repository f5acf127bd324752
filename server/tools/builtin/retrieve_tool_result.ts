// retrieve_tool_result: brings back any part of a tool result the pipeline cut and spilled,
// by byte range, line range or pattern. Runs in the server against the session's spills.
import { readFileSync } from "node:fs";
import { z } from "zod";
import { respond } from "../errors";
import { defineTool } from "../tool";

export const RETRIEVE_DEFAULT_LENGTH = 20_000;
export const RETRIEVE_MAX_LENGTH = 50_000;

const input = z
  .object({
    ref: z.string().min(1).describe('The reference from the cut result\'s marker, e.g. "sp_0123…".'),
    offset: z.number().int().min(0).optional().describe("Byte offset to start at (default 0)."),
    length: z
      .number()
      .int()
      .min(1)
      .max(RETRIEVE_MAX_LENGTH)
      .optional()
      .describe(`Bytes to read (default ${RETRIEVE_DEFAULT_LENGTH}).`),
    start_line: z.number().int().min(1).optional().describe("First line to return (1-based)."),
    end_line: z.number().int().min(1).optional().describe("Last line to return (inclusive)."),
    pattern: z
      .string()
      .min(1)
      .max(1000)
      .optional()
      .describe("Regular expression (RE2 syntax): return only matching lines."),
  })
  .refine((i) => i.start_line === undefined || i.end_line === undefined || i.end_line >= i.start_line, {
    message: "end_line must not be before start_line",
    path: ["end_line"],
  })
  .refine(
    (i) =>
      (i.offset === undefined && i.length === undefined) ||
      (i.start_line === undefined && i.end_line === undefined && i.pattern === undefined),
    {
      message: "use either offset/length or start_line/end_line/pattern, not both",
      path: ["offset"],
    },
  );

const fmt = (n: number) => n.toLocaleString("en-US");

export const retrieveToolResultTool = defineTool({
  name: "retrieve_tool_result",
  description: readFileSync(new URL("./retrieve_tool_result.txt", import.meta.url), "utf8").trim(),
  input,
  capabilities: ["ReadsFiles"],
  executor: "server",
  isReadOnly: () => true,
  isConcurrencySafe: () => true,
  fieldAliases: { id: "ref", spill_ref: "ref", reference: "ref", start: "offset", limit: "length", regex: "pattern" },
  summarize: (i) =>
    `Read stored output ${i.ref}${i.pattern ? ` matching /${i.pattern}/` : i.start_line ? ` lines ${i.start_line}–${i.end_line ?? "end"}` : ` from byte ${i.offset ?? 0}`}`,
  async execute(i, ctx) {
    const spills = ctx.services.spills;
    if (!spills) throw respond("retrieve_tool_result is not available here: no stored outputs can be read.");
    const missing = () =>
      respond(
        `No stored output "${i.ref}" in this session: the ref is wrong, or it expired (outputs are kept 7 days). Rerun the original command with narrower output instead.`,
      );
    if (i.start_line !== undefined || i.end_line !== undefined || i.pattern !== undefined) {
      if (!spills.lines) throw respond("Line and pattern reads are not available here; use offset and length.");
      let r;
      try {
        r = await spills.lines(i.ref, {
          sessionId: ctx.sessionId,
          start: i.start_line,
          end: i.end_line,
          pattern: i.pattern,
          maxBytes: RETRIEVE_MAX_LENGTH,
        });
      } catch (e) {
        throw respond(e instanceof Error ? e.message : String(e));
      }
      if (!r) throw missing();
      const what = i.pattern
        ? `${fmt(r.count)} line(s) matching /${i.pattern}/`
        : `lines ${i.start_line ?? 1}–${Math.min(i.end_line ?? r.totalLines, r.totalLines)}`;
      const cut = r.truncated ? ` (answer cut at ${fmt(RETRIEVE_MAX_LENGTH)} bytes: narrow the range or pattern)` : "";
      return { output: `[${what} of ${fmt(r.totalLines)} in ${i.ref}${cut}]\n${r.text}` };
    }
    const offset = i.offset ?? 0;
    const slice = await spills.read(i.ref, {
      sessionId: ctx.sessionId,
      offset,
      length: i.length ?? RETRIEVE_DEFAULT_LENGTH,
    });
    if (!slice) throw missing();
    if (offset >= slice.totalBytes)
      throw respond(`offset ${offset} is past the end: ${i.ref} has ${fmt(slice.totalBytes)} bytes.`);
    const end = slice.end ?? slice.offset + Buffer.byteLength(slice.text);
    const next = end < slice.totalBytes ? `; continue with offset ${end}` : "; this is the end";
    return {
      output: `[bytes ${fmt(slice.offset)}–${fmt(end)} of ${fmt(slice.totalBytes)} in ${i.ref}${next}]\n${slice.text}`,
    };
  },
});
