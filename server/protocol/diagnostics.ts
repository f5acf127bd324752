// The runner's `ide_diagnostics` op: a file's diagnostics from the workspace's language server
// (runner/lsp), for the editor's markers. Its input, and its `output` (JSON) when ok.
import { z } from "zod";

export const IDE_DIAGNOSTICS_OP = "ide_diagnostics";

export const IdeDiagnosticsInput = z.object({ path: z.string().min(1).max(4096) }).strict();

export const DiagnosticEntry = z.object({
  line: z.number().int().positive(),
  column: z.number().int().positive(),
  endLine: z.number().int().positive(),
  endColumn: z.number().int().positive(),
  severity: z.enum(["error", "warning", "info"]),
  code: z.number().int().optional(),
  message: z.string().max(10_000),
});
export type DiagnosticEntry = z.infer<typeof DiagnosticEntry>;

/** `ready: false`: the language server did not answer before the deadline (ask again later). */
export const IdeDiagnosticsResult = z.object({
  path: z.string(),
  ready: z.boolean(),
  diagnostics: z.array(DiagnosticEntry).max(200),
});
export type IdeDiagnosticsResult = z.infer<typeof IdeDiagnosticsResult>;
