// Inputs of the runner's file operations. The server's tool files (server/tools/builtin/*) and
// the runner's ops (runner/files/*) both import these, so what the model is told and what the
// runner accepts are the same schema.
import { z } from "zod";

export const FILE_LIMITS = {
  readDefaultLines: 2000,
  readMaxLines: 10_000,
  /** Longer lines are cut in read_file output (with a marker). */
  readMaxLineChars: 2000,
  readMaxBytes: 256 * 1024,
  listDefault: 1000,
  listMax: 5000,
  searchDefault: 200,
  searchMax: 2000,
  searchMaxLineChars: 500,
  globDefault: 500,
  globMax: 5000,
  diffMaxBytes: 200 * 1024,
  maxWriteBytes: 10 * 1024 * 1024,
} as const;

const path = z.string().min(1).max(4096);
const optionalDir = z
  .string()
  .max(4096)
  .optional()
  .describe("Directory relative to the workspace root (default: the root).");

export const ReadFileInput = z.object({
  path: path.describe("File path relative to the workspace root."),
  offset: z.number().int().min(1).optional().describe("First line to return, 1-based (default 1)."),
  limit: z
    .number()
    .int()
    .min(1)
    .max(FILE_LIMITS.readMaxLines)
    .optional()
    .describe(`How many lines to return (default ${FILE_LIMITS.readDefaultLines}).`),
});
export type ReadFileInput = z.infer<typeof ReadFileInput>;

export const ListFilesInput = z.object({
  path: optionalDir,
  depth: z.number().int().min(1).max(64).optional().describe("How many levels deep to list (default: all)."),
  limit: z
    .number()
    .int()
    .min(1)
    .max(FILE_LIMITS.listMax)
    .optional()
    .describe(`Most entries to return (default ${FILE_LIMITS.listDefault}).`),
});
export type ListFilesInput = z.infer<typeof ListFilesInput>;

export const SearchTextInput = z.object({
  pattern: z.string().min(1).max(10_000).describe("Text to search for (literal unless regex is true)."),
  regex: z.boolean().optional().describe("Treat pattern as a regular expression (Rust regex syntax). Default false."),
  case_sensitive: z
    .boolean()
    .optional()
    .describe("Match case exactly. Default: case-insensitive unless the pattern has capitals."),
  path: z
    .string()
    .max(4096)
    .optional()
    .describe("File or directory to search, relative to the workspace root (default: all)."),
  glob: z
    .string()
    .max(1000)
    .optional()
    .describe('Only search files matching this glob, e.g. "*.ts" or "src/**/*.tsx".'),
  context: z.number().int().min(0).max(10).optional().describe("Lines of context around each match (default 0)."),
  max_results: z
    .number()
    .int()
    .min(1)
    .max(FILE_LIMITS.searchMax)
    .optional()
    .describe(`Most matching lines to return (default ${FILE_LIMITS.searchDefault}).`),
});
export type SearchTextInput = z.infer<typeof SearchTextInput>;

export const GlobInput = z.object({
  pattern: z
    .string()
    .min(1)
    .max(1000)
    .describe('Glob such as "**/*.ts" or "src/*.json" (gitignore-style: "*.ts" matches at any depth).'),
  path: optionalDir,
  limit: z
    .number()
    .int()
    .min(1)
    .max(FILE_LIMITS.globMax)
    .optional()
    .describe(`Most paths to return (default ${FILE_LIMITS.globDefault}).`),
});
export type GlobInput = z.infer<typeof GlobInput>;

export const EditFileInput = z.object({
  path: path.describe("File to edit, relative to the workspace root. Read it completely with read_file first."),
  old_string: z
    .string()
    .min(1)
    .describe("Exact text to replace, including whitespace; must occur exactly once unless replace_all."),
  new_string: z.string().describe("Replacement text."),
  replace_all: z.boolean().optional().describe("Replace every occurrence instead of requiring exactly one."),
});
export type EditFileInput = z.infer<typeof EditFileInput>;

export const WriteFileInput = z.object({
  path: path.describe(
    "File to create or overwrite, relative to the workspace root. An existing file must be read first.",
  ),
  content: z.string().max(FILE_LIMITS.maxWriteBytes).describe("The complete new content of the file."),
});
export type WriteFileInput = z.infer<typeof WriteFileInput>;

export const ApplyPatchInput = z.object({
  patch: z
    .string()
    .min(1)
    .max(FILE_LIMITS.maxWriteBytes)
    .describe("A unified diff (---/+++ headers, @@ hunks); may touch several files. /dev/null creates or deletes."),
});
export type ApplyPatchInput = z.infer<typeof ApplyPatchInput>;

export const GitDiffInput = z.object({
  path: z.string().max(4096).optional().describe("Only this file or directory."),
  scope: z
    .enum(["session", "workspace"])
    .optional()
    .describe("session (default): files this session changed; workspace: every uncommitted change."),
  stat: z.boolean().optional().describe("Only a per-file summary of changed lines."),
});
export type GitDiffInput = z.infer<typeof GitDiffInput>;

/** Every file op, keyed by op name (= tool name). */
export const FILE_OPS = {
  read_file: ReadFileInput,
  list_files: ListFilesInput,
  search_text: SearchTextInput,
  glob: GlobInput,
  edit_file: EditFileInput,
  write_file: WriteFileInput,
  apply_patch: ApplyPatchInput,
  git_diff: GitDiffInput,
} as const;

/** preview_change (not a tool): the diff an edit_file or write_file would make, nothing written.
 *  The approval card shows it with the file's real line numbers; a change that could not be
 *  made is refused before anyone is asked. */
export const PreviewChangeInput = z.discriminatedUnion("tool", [
  z.object({ tool: z.literal("edit_file"), input: EditFileInput }),
  z.object({ tool: z.literal("write_file"), input: WriteFileInput }),
  z.object({ tool: z.literal("apply_patch"), input: ApplyPatchInput }),
]);
export type PreviewChangeInput = z.infer<typeof PreviewChangeInput>;
