// Git for real: a person's stored credentials (one per host and repository scope; the token is never shown again,
// only masked), and fetch, pull, push and clone for a session's workspace from the Changes
// panel. Thin: authorization decides who (the session's creator acts; credentials are each
// person's own), services/git-credentials and services/git-remote act.
import { z } from "zod";
import { GitCredentialError } from "../../services/git-credentials";
import { GitRemoteError } from "../../services/git-remote";
import { BranchName } from "../../protocol/git-remote";
import { gitServicesOf } from "../../services/git-remote-services";
import type { Services } from "../../services/types";
import { accountProcedure, router, serviceErrors, sessionProcedure } from "../trpc";

const session = z.object({ sessionId: z.string().min(1) });
/** `url`: the remote the panel showed; refused when the workspace's remote is another by now. */
const shown = session.extend({ url: z.string().min(1).max(2000).optional() });
const credentialGuard = serviceErrors(GitCredentialError, (e) => ({ code: e.code }));
const remoteGuard = serviceErrors(GitRemoteError, (e) => ({
  code: e.code,
  cause: e.status ? { status: e.status } : undefined,
}));

const git = (services: Services) => gitServicesOf(services);

/** Acting in the workspace: the session's creator, with their own credential. */
const writeProcedure = sessionProcedure("session.write");

export const gitRouter = router({
  /** The caller's credentials, masked. */
  credentials: accountProcedure.query(({ ctx }) => git(ctx.services).credentials.list(ctx.actor)),
  /** Stores or replaces the caller's credential for a host; answers with it masked. */
  saveCredential: accountProcedure
    .input(
      z.object({
        host: z.string().min(1).max(2000),
        username: z.string().min(1).max(200),
        token: z.string().min(1).max(4096),
      }),
    )
    .mutation(({ ctx, input }) => credentialGuard(() => git(ctx.services).credentials.save(ctx.actor, input))),
  removeCredential: accountProcedure
    .input(z.object({ credentialId: z.string().min(1).max(100) }))
    .mutation(({ ctx, input }) =>
      credentialGuard(() => git(ctx.services).credentials.remove(ctx.actor, input.credentialId)),
    ),

  /** Remote, branch, ahead/behind, and whether the caller has a credential for the remote's host (offline). */
  status: sessionProcedure("session.inspect")
    .input(session)
    .query(({ ctx, input }) => remoteGuard(() => git(ctx.services).remote.status(ctx.actor.userId, input.sessionId))),
  fetch: writeProcedure
    .input(shown)
    .mutation(({ ctx, input }) =>
      remoteGuard(() =>
        git(ctx.services).remote.run(ctx.actor.userId, input.sessionId, "fetch", { expectUrl: input.url }),
      ),
    ),
  pull: writeProcedure
    .input(shown)
    .mutation(({ ctx, input }) =>
      remoteGuard(() =>
        git(ctx.services).remote.run(ctx.actor.userId, input.sessionId, "pull", { expectUrl: input.url }),
      ),
    ),
  push: writeProcedure
    .input(shown)
    .mutation(({ ctx, input }) =>
      remoteGuard(() =>
        git(ctx.services).remote.run(ctx.actor.userId, input.sessionId, "push", { expectUrl: input.url }),
      ),
    ),
  /** Into the session's workspace, which must be empty. */
  clone: writeProcedure
    .input(session.extend({ url: z.string().min(1).max(2000), branch: BranchName.optional() }))
    .mutation(({ ctx, input }) =>
      remoteGuard(() => git(ctx.services).remote.clone(ctx.actor.userId, input.sessionId, input.url, input.branch)),
    ),
});
