// The person's file operations from the IDE: tree, search and replace, find, open, save, new
// file/folder, rename, delete, and the uncommitted changes with each file's earlier version and a
// commit (the Changes panel).
// Thin: authorization (server/auth/authorize.ts) decides who, then services/files acts. Changes
// are the session's creator's; its org's admins and share-link viewers may list and open files.
import { z } from "zod";
import { FileOpError, type FileService } from "../../services/files";
import { workspaceUsage } from "../../services/files-usage";
import { fileDiagnostics } from "../../services/files-diagnostics";
import { PERSON_FILE_LIMITS, PERSON_FILE_OPS } from "../../protocol/person-file-ops";
import { redactSearch } from "../../auth/redact-lines";
import { router, serviceErrors, sessionProcedure, sessionReadProcedure } from "../trpc";

const path = z.string().trim().min(1).max(4096);
const session = z.object({ sessionId: z.string().min(1) });

const CODES = {
  not_found: "NOT_FOUND",
  conflict: "CONFLICT",
  invalid: "BAD_REQUEST",
  unavailable: "PRECONDITION_FAILED",
} as const;

/** Changing files: the session's creator. */
const fileProcedure = sessionProcedure("session.write").use(({ ctx, next }) =>
  next({ ctx: { ...ctx, files: ctx.services.files as FileService } }),
);
/** Raw bytes (cannot be redacted for a viewer): the creator and the org's admins. */
const fileInspectProcedure = sessionProcedure("session.inspect").use(({ ctx, next }) =>
  next({ ctx: { ...ctx, files: ctx.services.files as FileService } }),
);

/** Listing and opening: members with access, and viewers of the session. */
const fileReadProcedure = sessionReadProcedure().use(({ ctx, next }) =>
  next({ ctx: { ...ctx, files: ctx.services.files as FileService } }),
);

const guard = serviceErrors(FileOpError, (e) => ({
  code: CODES[e.kind],
  cause: e.kind === "conflict" ? { currentHash: e.currentHash } : undefined,
}));

export const filesRouter = router({
  tree: fileReadProcedure
    .input(session.extend({ folder: path.optional() }))
    .query(({ ctx, input }) => guard(() => ctx.files.tree(input.sessionId, input.folder))),
  search: fileReadProcedure
    .input(
      session.extend({
        query: z.string().min(1).max(1000),
        regex: z.boolean().optional(),
        caseSensitive: z.boolean().optional(),
        glob: z.string().trim().max(1000).optional(),
      }),
    )
    .query(({ ctx, input }) =>
      guard(async () => {
        const found = await ctx.files.search(input.sessionId, input);
        // A viewer's: redacted against each whole file, not line by line (a key's body).
        return ctx.grant.viewer ? redactSearch(found, (p) => ctx.files.read(input.sessionId, p)) : found;
      }),
    ),
  find: fileReadProcedure
    .input(session.extend({ query: z.string().min(1).max(200) }))
    .query(({ ctx, input }) => guard(() => ctx.files.find(input.sessionId, input.query))),
  read: fileReadProcedure
    .input(session.extend({ path }))
    .query(({ ctx, input }) => guard(() => ctx.files.read(input.sessionId, input.path))),
  // Members only: raw bytes cannot be redacted for a share viewer as text is.
  raw: fileInspectProcedure
    .input(session.extend({ path }))
    .query(({ ctx, input }) => guard(() => ctx.files.raw(input.sessionId, input.path))),
  /** The workspace's bytes used and its disk limit (the status bar); null: its runner measures none. */
  usage: fileReadProcedure
    .input(session)
    .query(({ ctx, input }) => guard(() => workspaceUsage(ctx.services.runners, input.sessionId))),
  /** The file's diagnostics from the workspace's language server (the editor's markers). */
  diagnostics: fileReadProcedure
    .input(session.extend({ path }))
    .query(({ ctx, input }) => guard(() => fileDiagnostics(ctx.services.runners, input.sessionId, input.path))),
  changes: fileReadProcedure.input(session).query(({ ctx, input }) => guard(() => ctx.files.changes(input.sessionId))),
  original: fileReadProcedure
    .input(session.extend({ path }))
    .query(({ ctx, input }) => guard(() => ctx.files.original(input.sessionId, input.path))),
  replace: fileProcedure
    .input(
      session.extend({
        query: z.string().min(1).max(1000),
        regex: z.boolean().optional(),
        caseSensitive: z.boolean().optional(),
        replacement: z.string().max(100_000),
        paths: z.array(path).min(1).max(2000),
      }),
    )
    .mutation(({ ctx, input }) => guard(() => ctx.files.replace(input.sessionId, input))),
  commit: fileProcedure
    .input(session.extend({ message: z.string().trim().min(1, "Write a commit message.").max(10_000) }))
    .mutation(({ ctx, input }) => guard(() => ctx.files.commit(input.sessionId, input.message))),
  save: fileProcedure
    .input(
      session.extend({
        path,
        content: z.string().max(PERSON_FILE_LIMITS.maxSaveBytes),
        expectHash: z
          .string()
          .regex(/^[0-9a-f]{64}$/)
          .nullable()
          .optional(),
      }),
    )
    .mutation(({ ctx, input }) =>
      guard(() => ctx.files.save(input.sessionId, input.path, input.content, input.expectHash)),
    ),
  upload: fileProcedure
    .input(
      session.extend({ path, base64: PERSON_FILE_OPS.ide_write_bytes.shape.base64, overwrite: z.boolean().optional() }),
    )
    .mutation(({ ctx, input }) =>
      guard(() => ctx.files.upload(input.sessionId, input.path, input.base64, input.overwrite)),
    ),
  create: fileProcedure.input(session.extend({ path, kind: z.enum(["file", "dir"]) })).mutation(({ ctx, input }) =>
    guard(async () => {
      if (input.kind === "dir") await ctx.files.mkdir(input.sessionId, input.path);
      else await ctx.files.save(input.sessionId, input.path, "", null);
      return { path: input.path };
    }),
  ),
  rename: fileProcedure
    .input(session.extend({ from: path, to: path }))
    .mutation(({ ctx, input }) => guard(() => ctx.files.rename(input.sessionId, input.from, input.to))),
  remove: fileProcedure
    .input(session.extend({ path }))
    .mutation(({ ctx, input }) => guard(() => ctx.files.remove(input.sessionId, input.path))),
});
