// Diagnostics after an edit: write_file, edit_file and apply_patch of a TypeScript/JavaScript file
// end their result with that file's diagnostics from the workspace's language server (server.ts),
// bounded in count and bytes, and in time: past the deadline the result says they were not ready
// (the edit itself stands either way). `ide_diagnostics` gives the editor the same list for an
// open file (its Monaco markers).
import { IDE_DIAGNOSTICS_OP, IdeDiagnosticsInput } from "../../server/protocol/diagnostics";
import { defineOp, type AnyOp, type OpResult, type OpTable } from "../ops";
import type { Workspace } from "../workspace/workspace";
import { languageOf, type Diagnostic, type TypeScriptServer } from "./server";

export const DIAGNOSTICS_LIMITS = {
  /** Diagnostics listed per file in a result (errors first). */
  maxPerFile: 20,
  /** Bytes of diagnostics text appended to one result. */
  maxBytes: 4000,
  /** One message's characters. */
  maxMessage: 300,
  /** Files of one patch checked. */
  maxFiles: 5,
};

const EDIT_OPS = ["write_file", "edit_file", "apply_patch"];
const RANK = { error: 0, warning: 1, info: 2 } as const;

/** The deadline for an edit's diagnostics (ms), from QUIVER_DIAGNOSTICS_MS; 0 turns them off. */
export function diagnosticsDeadlineMs(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.QUIVER_DIAGNOSTICS_MS?.trim();
  const n = raw ? Number(raw) : NaN;
  return Number.isInteger(n) && n >= 0 ? n : 15_000;
}

/** The text the model gets for one file's diagnostics. */
export function formatDiagnostics(path: string, all: Diagnostic[]): string {
  const shown = all
    .filter((d) => d.severity !== "info")
    .sort((a, b) => RANK[a.severity] - RANK[b.severity] || a.line - b.line || a.column - b.column);
  if (shown.length === 0) return `No errors or warnings in ${path} (typescript-language-server).`;
  const errors = shown.filter((d) => d.severity === "error").length;
  const head = `Diagnostics of ${path} after this change (typescript-language-server): ${errors} error${errors === 1 ? "" : "s"}, ${shown.length - errors} warning${shown.length - errors === 1 ? "" : "s"}`;
  const lines: string[] = [head];
  let bytes = head.length;
  let listed = 0;
  for (const d of shown.slice(0, DIAGNOSTICS_LIMITS.maxPerFile)) {
    const msg = d.message.replace(/\s+/g, " ").slice(0, DIAGNOSTICS_LIMITS.maxMessage);
    const line = `${path}:${d.line}:${d.column} ${d.severity}${d.code ? ` TS${d.code}` : ""}: ${msg}`;
    if (bytes + line.length + 1 > DIAGNOSTICS_LIMITS.maxBytes) break;
    lines.push(line);
    bytes += line.length + 1;
    listed++;
  }
  if (listed < shown.length) lines.push(`(${shown.length - listed} more not shown)`);
  return lines.join("\n");
}

/** One file's diagnostics within `ms`, or null when they were not ready by then. */
async function within(
  ls: TypeScriptServer,
  workspace: Workspace,
  rel: string,
  ms: number,
): Promise<Diagnostic[] | null | Error> {
  const read = await workspace.files.readFile(rel, { follow: false, maxBytes: 2 * 1024 * 1024 }).catch(() => undefined);
  if (!read || read.kind !== "file") return new Error(`${rel} could not be read back`);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<null>((r) => (timer = setTimeout(() => r(null), ms)));
  try {
    return await Promise.race([ls.diagnostics(rel, read.data.toString("utf8")), late]);
  } catch (err) {
    return err as Error;
  } finally {
    clearTimeout(timer);
  }
}

function editedPaths(result: OpResult): string[] {
  const meta = result.meta ?? {};
  const paths =
    typeof meta.path === "string"
      ? [meta.path]
      : Array.isArray(meta.paths)
        ? meta.paths.filter((p): p is string => typeof p === "string")
        : [];
  return paths.filter((p) => languageOf(p)).slice(0, DIAGNOSTICS_LIMITS.maxFiles);
}

function withDiagnostics(op: AnyOp, ls: () => TypeScriptServer, deadlineMs: number): AnyOp {
  return {
    input: op.input,
    async run(input, ctx): Promise<OpResult> {
      const result = await op.run(input, ctx);
      const paths = result.ok ? editedPaths(result) : [];
      if (paths.length === 0) return result;
      const until = Math.min(Date.now() + deadlineMs, ctx.deadline - 500);
      const parts: string[] = [];
      const counts: Record<string, number> = {};
      for (const rel of paths) {
        const got = await within(ls(), ctx.workspace, rel, Math.max(0, until - Date.now()));
        if (got === null)
          parts.push(
            `Diagnostics of ${rel} were not ready within ${Math.round(deadlineMs / 1000)} s (the language server is starting or still checking); the editor shows them when they are.`,
          );
        else if (got instanceof Error) parts.push(`Diagnostics of ${rel} are unavailable: ${got.message}.`);
        else {
          parts.push(formatDiagnostics(rel, got));
          counts[rel] = got.filter((d) => d.severity === "error").length;
        }
      }
      return {
        ...result,
        output: `${result.output}\n\n${parts.join("\n\n")}`,
        meta: { ...result.meta, diagnostics: counts },
      };
    },
  };
}

/** A read of a TS/JS file starts the language server, so the edit that follows finds it ready. */
function warming(op: AnyOp, ls: () => TypeScriptServer): AnyOp {
  return {
    input: op.input,
    async run(input, ctx) {
      const path = (input as { path?: unknown }).path;
      if (typeof path === "string" && languageOf(path)) ls().warm();
      return op.run(input, ctx);
    },
  };
}

/** The edit ops of `table` wrapped with diagnostics after them, read_file with warming (others as they are). */
export function withEditDiagnostics(
  table: OpTable,
  ls: () => TypeScriptServer,
  deadlineMs = diagnosticsDeadlineMs(),
): OpTable {
  if (deadlineMs === 0) return table;
  return Object.fromEntries(
    Object.entries(table).map(([name, op]) => [
      name,
      EDIT_OPS.includes(name) ? withDiagnostics(op, ls, deadlineMs) : name === "read_file" ? warming(op, ls) : op,
    ]),
  );
}

/** The editor's markers for an open file: its diagnostics as they are on disk now ({ ready: false } past the deadline). */
export function ideDiagnosticsOp(ls: () => TypeScriptServer, deadlineMs = diagnosticsDeadlineMs()): OpTable {
  return {
    [IDE_DIAGNOSTICS_OP]: defineOp({
      input: IdeDiagnosticsInput,
      async run({ path }, ctx) {
        if (!languageOf(path)) return { ok: true, output: JSON.stringify({ path, ready: true, diagnostics: [] }) };
        const got = await within(
          ls(),
          ctx.workspace,
          path,
          Math.max(0, Math.min(deadlineMs || 10_000, ctx.deadline - Date.now() - 500)),
        );
        if (got instanceof Error) return { ok: false, output: got.message };
        return {
          ok: true,
          output: JSON.stringify({ path, ready: got !== null, diagnostics: (got ?? []).slice(0, 200) }),
        };
      },
    }),
  };
}
