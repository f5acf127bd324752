// An org's single sign-on settings: owners and admins read them and test the issuer, owners
// save and remove them and verify their email domains by DNS (services/sso.ts).
// Thin: the rules live in services/sso.ts; the client secret is accepted here and never returned.
import { z } from "zod";
import { SsoError } from "../../services/sso";
import { adminProcedure, router, serviceErrors } from "../trpc";

const guard = serviceErrors(SsoError, (e) => ({ code: e.code }));

export const ssoRouter = router({
  /** The active org's settings (no secret: only whether one is stored). */
  get: adminProcedure.query(({ ctx }) => guard(() => ctx.services.sso.get(ctx.actor))),

  /** `clientSecret` absent or empty keeps the stored one; the issuer's discovery must answer. */
  save: adminProcedure
    .input(
      z.object({
        issuer: z.string().max(2000),
        clientId: z.string().max(500),
        clientSecret: z.string().max(4000).optional(),
        domains: z.string().max(5000),
      }),
    )
    .mutation(({ ctx, input }) => guard(() => ctx.services.sso.save(ctx.actor, input))),

  /** Fetches and checks the discovery document (of `issuer`, or of the saved settings). */
  test: adminProcedure
    .input(z.object({ issuer: z.string().max(2000).optional() }).optional())
    .mutation(({ ctx, input }) => guard(() => ctx.services.sso.test(ctx.actor, input?.issuer))),

  remove: adminProcedure.mutation(({ ctx }) => guard(() => ctx.services.sso.remove(ctx.actor))),

  /** Looks up a saved domain's TXT record; found, the domain admits people through the org's IdP. */
  verifyDomain: adminProcedure
    .input(z.object({ domain: z.string().min(1).max(253) }))
    .mutation(({ ctx, input }) => guard(() => ctx.services.sso.verifyDomain(ctx.actor, input.domain))),
});
