// Organizations: the person's orgs and switching between them, the active org's members
// (roles, removal, leaving), invitations, new orgs. Thin: the procedure kind is the first gate
// (server/auth/authorize.ts: a person's own account, a member of the active org, or its owners
// and admins); services/orgs.ts then applies the org rules (services/orgs-rules.ts) on the rows
// inside the transaction that makes the change, and audits it.
import { z } from "zod";
import { OrgError } from "../../services/orgs";
import { EXPIRY_HOURS, linkOrigin } from "../../services/orgs-invitations";
import { isLoopbackAddress } from "../../auth/identity";
import type { Env } from "../../env";
import { ROLES } from "../../services/orgs-rules";
import { accountProcedure, adminProcedure, memberProcedure, publicProcedure, router, serviceErrors } from "../trpc";

const guard = serviceErrors(OrgError, (e) => ({ code: e.code }));
/** The hosts this server answers to (as app.ts's guard counts them): a mailed link's base must be one. */
const hostsOf = (env: Env) => [...env.QUIVER_ALLOWED_HOSTS, ...(isLoopbackAddress(env.HOST) ? [env.HOST] : [])];
const Role = z.enum(ROLES);
const Id = z.string().min(1).max(200);
const Token = z.string().min(1).max(200);

export const orgsRouter = router({
  /** The person's orgs and which one is active. */
  mine: accountProcedure.query(({ ctx }) => guard(() => ctx.services.orgs.mine(ctx.actor))),

  /** Makes another of the person's orgs the active one (every open page follows). */
  switch: accountProcedure
    .input(z.object({ orgId: Id }))
    .mutation(({ ctx, input }) => guard(() => ctx.services.orgs.switch(ctx.actor, input.orgId))),

  create: accountProcedure
    .input(z.object({ name: z.string().max(200) }))
    .mutation(({ ctx, input }) => guard(() => ctx.services.orgs.create(ctx.actor, input.name))),

  /** The active org's members, with the roles the asker may give each and whether they may remove them. */
  members: memberProcedure.query(({ ctx }) => guard(() => ctx.services.orgs.members(ctx.actor))),

  changeRole: adminProcedure
    .input(z.object({ memberId: Id, role: Role }))
    .mutation(({ ctx, input }) => guard(() => ctx.services.orgs.changeRole(ctx.actor, input.memberId, input.role))),

  remove: adminProcedure
    .input(z.object({ memberId: Id }))
    .mutation(({ ctx, input }) => guard(() => ctx.services.orgs.remove(ctx.actor, input.memberId))),

  leave: accountProcedure
    .input(z.object({ orgId: Id }))
    .mutation(({ ctx, input }) => guard(() => ctx.services.orgs.leave(ctx.actor, input.orgId))),

  /**
   * A new invitation: its link is in the answer only (show it to copy), and mailed when mail is
   * set up, based at `origin` (the page's) when this server answers to that host.
   */
  invite: adminProcedure
    .input(
      z.object({
        email: z.string().max(320),
        role: Role,
        expiresInHours: z.number().int().min(EXPIRY_HOURS.min).max(EXPIRY_HOURS.max).optional(),
        origin: z.string().max(300).optional(),
      }),
    )
    .mutation(({ ctx, input }) =>
      guard(() =>
        ctx.services.orgs.invitations.create(ctx.actor, input, linkOrigin(input.origin, hostsOf(ctx.services.env))),
      ),
    ),

  invitations: adminProcedure.query(({ ctx }) => guard(() => ctx.services.orgs.invitations.list(ctx.actor))),

  revokeInvitation: adminProcedure
    .input(z.object({ invitationId: Id }))
    .mutation(({ ctx, input }) => guard(() => ctx.services.orgs.invitations.revoke(ctx.actor, input.invitationId))),

  /** What an invitation link is for (its holder reads it before signing in or up). */
  invitation: publicProcedure
    .input(z.object({ token: Token }))
    .query(({ ctx, input }) => guard(() => ctx.services.orgs.invitations.info(input.token))),

  /** The signed-in person joins with a link made for their email; its org becomes the active one. */
  accept: accountProcedure
    .input(z.object({ token: Token }))
    .mutation(({ ctx, input }) => guard(() => ctx.services.orgs.join(ctx.actor, input.token))),
});
