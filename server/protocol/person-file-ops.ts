// Inputs of the file operations the person performs from the IDE (open, save, new, rename,
// delete). They are not agent tools and never reach the model or the pipeline, but they run on
// the runner, inside the same workspace confinement as the tools. Ops are named `ide_*` so they
// can never collide with a tool name the pipeline sends.
import { z } from "zod";

export const PERSON_FILE_LIMITS = {
  /** Largest file the editor opens. */
  maxOpenBytes: 20 * 1024 * 1024,
  maxSaveBytes: 20 * 1024 * 1024,
  /** Largest file ide_read_bytes returns (image preview, download). */
  maxRawBytes: 10 * 1024 * 1024,
  /** Largest file uploaded from the person's computer, one at a time. */
  maxUploadBytes: 10 * 1024 * 1024,
  /** Most paths ide_find returns. */
  maxFound: 5000,
} as const;

const path = z.string().min(1).max(4096);
/** sha256 hex of the content the editor started from; null: the file must not exist yet. */
const expectHash = z
  .string()
  .regex(/^[0-9a-f]{64}$/)
  .nullable();

export const PERSON_FILE_OPS = {
  ide_read: z.object({ path }),
  /** A file's bytes, any content (output: base64; meta: PersonRaw): image preview, download. */
  ide_read_bytes: z.object({ path }),
  ide_write: z.object({
    path,
    content: z.string().max(PERSON_FILE_LIMITS.maxSaveBytes),
    /** Omitted: overwrite whatever is there (the person chose to). */
    expectHash: expectHash.optional(),
  }),
  /** A file from the person's computer (upload, drop on the tree): its bytes as base64. An
   *  existing file is replaced only with `overwrite` (else: ok false, meta PersonUploaded.exists). */
  ide_write_bytes: z.object({
    path,
    base64: z
      .string()
      .max(Math.ceil(PERSON_FILE_LIMITS.maxUploadBytes / 3) * 4)
      .regex(/^[A-Za-z0-9+/]*={0,2}$/, "must be base64"),
    overwrite: z.boolean().optional(),
  }),
  ide_mkdir: z.object({ path }),
  ide_rename: z.object({ from: path, to: path }),
  ide_delete: z.object({ path }),
  /** The workspace's uncommitted changes, file by file (meta: PersonChanges). */
  ide_changes: z.object({}),
  /** A changed file as it was: at HEAD in a git work tree, else before the runner first wrote
   *  it (output: its text; meta: PersonOriginal). */
  ide_original: z.object({ path }),
  /** Files whose path holds the query's characters in order, case-insensitive, .gitignore
   *  honoured (quick open past the tree's listing; the IDE ranks them). meta: PersonFound. */
  ide_find: z.object({ query: z.string().min(1).max(200) }),
  /** Commits every change inside the workspace folder (git work trees only; hooks do not run).
   *  meta: PersonCommit. */
  ide_commit: z.object({ message: z.string().trim().min(1).max(10_000) }),
  /** Replace in files (the search panel): each line of the named files, as the search matched
   *  it (literal or regex; exact case when asked or when the pattern has capitals), with
   *  `replacement` ($1… are groups of a regex). meta: PersonReplaced. */
  ide_replace: z.object({
    pattern: z.string().min(1).max(10_000),
    regex: z.boolean().optional(),
    caseSensitive: z.boolean().optional(),
    replacement: z.string().max(100_000),
    paths: z.array(path).min(1).max(2000),
  }),
} as const;

export type PersonFileOp = keyof typeof PERSON_FILE_OPS;
export type PersonFileInput<K extends PersonFileOp> = z.infer<(typeof PERSON_FILE_OPS)[K]>;

/** `meta` of ide_read and ide_write results. */
export const PersonFileMeta = z.object({ path: z.string(), hash: z.string(), size: z.number().int().nonnegative() });
export type PersonFileMeta = z.infer<typeof PersonFileMeta>;

/** `meta.conflict` is set when ide_write refused because the file changed since it was opened. */
export const PersonWriteConflict = z.object({ conflict: z.literal(true), hash: z.string().nullable() });

/** `meta` of ide_changes: each changed file with its kind of change and its line counts. */
export const PersonChanges = z.object({
  /** "git": against HEAD, untracked files included; "baseline": against what the runner first saw. */
  mode: z.enum(["git", "baseline"]),
  files: z.array(
    z.object({
      path: z.string(),
      status: z.enum(["added", "modified", "deleted"]),
      added: z.number().int().nonnegative(),
      removed: z.number().int().nonnegative(),
      binary: z.boolean().optional(),
    }),
  ),
  /** The diff was too large to read whole: the list may miss files. */
  truncated: z.boolean(),
  /** git mode: the checked-out branch (or "detached at <sha>"). */
  branch: z.string().optional(),
});
export type PersonChanges = z.infer<typeof PersonChanges>;

/** `meta` of ide_original: false when the file is new (there is no earlier version). */
export const PersonOriginal = z.object({ existed: z.boolean(), binary: z.boolean().optional() });

/** `meta` of ide_find: matching paths in the workspace's order; truncated past maxFound. */
export const PersonFound = z.object({ paths: z.array(z.string()), truncated: z.boolean() });
export type PersonFound = z.infer<typeof PersonFound>;

/** `meta` of ide_commit: the new commit's short hash. */
export const PersonCommit = z.object({ commit: z.string() });
export type PersonCommit = z.infer<typeof PersonCommit>;

/** `meta` of ide_replace: what was replaced, and the files left as they were, with why. */
export const PersonReplaced = z.object({
  files: z.number().int().nonnegative(),
  replacements: z.number().int().nonnegative(),
  skipped: z.array(z.object({ path: z.string(), reason: z.string() })),
});
export type PersonReplaced = z.infer<typeof PersonReplaced>;

/** `meta` of ide_write_bytes: the file written, or (ok false) that one is there already. */
export const PersonUploaded = z.object({
  path: z.string(),
  size: z.number().int().nonnegative().optional(),
  exists: z.boolean().optional(),
});
export type PersonUploaded = z.infer<typeof PersonUploaded>;

/** `meta` of ide_read_bytes. */
export const PersonRaw = z.object({ path: z.string(), size: z.number().int().nonnegative() });
