// Projects: the org's projects with the person's sessions in each, new ones (name and source:
// empty, a git repository and branch, an uploaded archive), renames, deletes (which remove the
// project's workspaces from their runners), and where a session's workspace is (the IDE's
// banner when its runner is gone). Logic lives in services/projects.ts and services/placement.ts.
import { z } from "zod";
import { memberProcedure, router, sessionReadProcedure } from "../trpc";
import { BranchName, parseRemoteUrl, RemoteUrlText, type RemoteUrl } from "../../protocol/git-remote";

const name = z.string().trim().min(1).max(100);
const label = z
  .string()
  .trim()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9._:-]+$/, "a label is letters, digits and . _ : -");

export const ProjectSourceInput = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("empty") }),
  z.object({
    kind: z.literal("git"),
    // The same check as git's own clone/fetch/push (protocol/git-remote.ts): https, or http only to
    // loopback (a local forge, the tests' git server); no credentials, options or other transports.
    url: RemoteUrlText.transform((u) => (parseRemoteUrl(u) as RemoteUrl).url),
    branch: BranchName.optional(),
  }),
  // The upload's id (P4's archive uploads hand it out).
  z.object({ kind: z.literal("archive"), name: z.string().trim().min(1).max(200) }),
]);

export const projectsRouter = router({
  list: memberProcedure.query(({ ctx }) => ctx.services.projects.list(ctx.actor)),
  create: memberProcedure
    .input(z.object({ name, source: ProjectSourceInput, runnerLabels: z.array(label).max(16).optional() }))
    .mutation(({ ctx, input }) => ctx.services.projects.create(ctx.actor, input)),
  rename: memberProcedure
    .input(z.object({ id: z.string().min(1).max(100), name }))
    .mutation(({ ctx, input }) => ctx.services.projects.rename(ctx.actor, input.id, input.name)),
  remove: memberProcedure
    .input(z.object({ id: z.string().min(1).max(100) }))
    .mutation(({ ctx, input }) => ctx.services.projects.remove(ctx.actor, input.id)),
  /** The session's workspace and its runner: connected, or gone since when. */
  workspaceOf: sessionReadProcedure("sessionId")
    .input(z.object({ sessionId: z.string().min(1) }))
    .query(({ ctx, input }) => ctx.services.projects.workspaceStatus(input.sessionId)),
});
