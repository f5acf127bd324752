// The project's declared checks (`quiver.checks.json` at the workspace root) and the inputs of
// run_check and tool_transaction. The runner parses the file with these schemas and runs
// exactly what it says; the server builds run_check's name enum from the same parse.
import { z } from "zod";
import { ApplyPatchInput, EditFileInput, ReadFileInput, WriteFileInput } from "./file-ops";

export const CHECKS_FILE = "quiver.checks.json";

export const CHECK_LIMITS = {
  maxChecks: 32,
  maxArgs: 128,
  maxArgChars: 4096,
  defaultTimeoutMs: 300_000,
  minTimeoutMs: 1_000,
  maxTimeoutMs: 1_800_000,
  maxOutputBytes: 200_000,
  maxFileBytes: 64 * 1024,
  /** Steps of one tool_transaction. */
  maxSteps: 12,
} as const;

export const CHECK_NAME = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,39}$/;
const NAME_RULE = "a check name is 1-40 letters, digits, _ . : - (starting with a letter or digit)";

const relativeDir = z
  .string()
  .min(1)
  .max(1024)
  .refine(
    (p) => !p.startsWith("/") && !p.split(/[\\/]/).includes(".."),
    "must be a folder inside the workspace, relative to its root, without ..",
  );

export const CheckSpec = z
  .object({
    argv: z
      .array(
        z
          .string()
          .min(1, "an argument may not be empty")
          .max(CHECK_LIMITS.maxArgChars)
          .refine((a) => !a.includes("\0"), "may not contain a NUL byte"),
      )
      .min(1, 'argv needs at least the program to run, e.g. ["npm", "test"]')
      .max(CHECK_LIMITS.maxArgs),
    timeoutMs: z.number().int().min(CHECK_LIMITS.minTimeoutMs).max(CHECK_LIMITS.maxTimeoutMs).optional(),
    cwd: relativeDir.optional(),
  })
  .strict();
export type CheckSpec = z.infer<typeof CheckSpec>;

export const ChecksFile = z
  .record(z.string().regex(CHECK_NAME, NAME_RULE), CheckSpec)
  .refine((r) => Object.keys(r).length > 0, "the file declares no checks")
  .refine((r) => Object.keys(r).length <= CHECK_LIMITS.maxChecks, `at most ${CHECK_LIMITS.maxChecks} checks`);
export type ChecksFile = z.infer<typeof ChecksFile>;

export type ParsedChecks = { ok: true; checks: ChecksFile } | { ok: false; error: string };

const FIX = `Fix ${CHECKS_FILE}: an object of named checks, e.g. {"test": {"argv": ["npm", "test"], "timeoutMs": 600000}, "lint": {"argv": ["npx", "eslint", "."]}}.`;

function lineOf(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, Math.max(0, offset));
  const line = before.split("\n").length;
  return { line, column: offset - before.lastIndexOf("\n") };
}

/** Where a JSON path's last key first appears in the text, as a line number (best effort). */
function lineOfPath(text: string, path: PropertyKey[]): number | undefined {
  let from = 0;
  for (const key of path) {
    if (typeof key !== "string") continue;
    const at = text.indexOf(JSON.stringify(key), from);
    if (at < 0) return undefined;
    from = at;
  }
  return from > 0 ? lineOf(text, from).line : undefined;
}

const pathText = (path: PropertyKey[]) =>
  path
    .map((k) => (typeof k === "number" ? `[${k}]` : `.${String(k)}`))
    .join("")
    .replace(/^\./, "") || "(top level)";

/** Parses the file's text; the error names the line and field and says what to do. */
export function parseChecksFile(text: string): ParsedChecks {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    const msg = (err as Error).message;
    const pos = /position (\d+)/.exec(msg);
    const where = pos ? (({ line, column }) => ` at line ${line}, column ${column}`)(lineOf(text, Number(pos[1]))) : "";
    return { ok: false, error: `${CHECKS_FILE} is not valid JSON${where}: ${msg}. ${FIX}` };
  }
  const r = ChecksFile.safeParse(json);
  if (r.success) return { ok: true, checks: r.data };
  const problems = r.error.issues.slice(0, 5).map((i) => {
    const line = lineOfPath(text, i.path);
    const message = i.code === "invalid_key" ? NAME_RULE : i.message;
    return `${pathText(i.path)}${line ? ` (line ${line})` : ""}: ${message}`;
  });
  return { ok: false, error: `${CHECKS_FILE} is invalid: ${problems.join("; ")}. ${FIX}` };
}

export const RunCheckInput = z.object({
  name: z.string().min(1).max(64).describe(`The name of a check declared in ${CHECKS_FILE}.`),
});
export type RunCheckInput = z.infer<typeof RunCheckInput>;

/** The runner's `checks_list` answer (meta): the parsed file, or why there is none. */
export const ChecksListMeta = z.union([
  z.object({ ok: z.literal(true), checks: ChecksFile }),
  z.object({ ok: z.literal(false), missing: z.boolean(), error: z.string() }),
]);
export type ChecksListMeta = z.infer<typeof ChecksListMeta>;

export const checkNames = (checks: ChecksFile) => Object.keys(checks).sort();

/** Looks a name up; the refusal lists the names there are (or says why there are none). */
export function findCheck(
  list: ChecksListMeta,
  name: string,
): { ok: true; argv: string[]; timeoutMs: number; cwd?: string } | { ok: false; output: string } {
  if (!list.ok) return { ok: false, output: list.error };
  if (!Object.hasOwn(list.checks, name)) {
    return {
      ok: false,
      output: `There is no check named ${JSON.stringify(name)} in ${CHECKS_FILE}. The checks are: ${checkNames(list.checks).join(", ")}.`,
    };
  }
  const spec = list.checks[name];
  return { ok: true, argv: spec.argv, timeoutMs: spec.timeoutMs ?? CHECK_LIMITS.defaultTimeoutMs, cwd: spec.cwd };
}

export const TransactionStep = z.discriminatedUnion("op", [
  ReadFileInput.extend({ op: z.literal("read_file") }).strict(),
  EditFileInput.extend({ op: z.literal("edit_file") }).strict(),
  WriteFileInput.extend({ op: z.literal("write_file") }).strict(),
  ApplyPatchInput.extend({ op: z.literal("apply_patch") }).strict(),
  RunCheckInput.extend({ op: z.literal("run_check") }).strict(),
]);
export type TransactionStep = z.infer<typeof TransactionStep>;

export const TransactionInput = z.object({
  steps: z
    .array(TransactionStep)
    .min(1)
    .max(CHECK_LIMITS.maxSteps)
    .describe(
      `1-${CHECK_LIMITS.maxSteps} steps. Reads and edits run in order, then every run_check step runs; any failure puts every file back.`,
    ),
});
export type TransactionInput = z.infer<typeof TransactionInput>;

export const isEditStep = (
  s: TransactionStep,
): s is Extract<TransactionStep, { op: "edit_file" | "write_file" | "apply_patch" }> =>
  s.op === "edit_file" || s.op === "write_file" || s.op === "apply_patch";
