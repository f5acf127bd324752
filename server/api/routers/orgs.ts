// Organizations: the person's orgs and switching between them, the active org's members
// (roles, removal, leaving), invitations, new orgs. Thin: services/orgs.ts decides who may do
// what (services/orgs-rules.ts), inside the transaction that makes the change, and audits it.
import { z } from "zod";
import { OrgError } from "../../services/orgs";
import { EXPIRY_HOURS, linkOrigin } from "../../services/orgs-invitations";
import { isLoopbackAddress } from "../../auth/identity";
import type { Env } from "../../env";
import { ROLES } from "../../services/orgs-rules";
import { memberProcedure, publicProcedure, router, serviceErrors } from "../trpc";

const guard = serviceErrors(OrgError, (e) => ({ code: e.code }));
/** The hosts this server answers to (as app.ts's guard counts them): a mailed link's base must be one. */
const hostsOf = (env: Env) => [...env.QUIVER_ALLOWED_HOSTS, ...(isLoopbackAddress(env.HOST) ? [env.HOST] : [])];
const Role = z.enum(ROLES);
const Id = z.string().min(1).max(200);
const Token = z.string().min(1).max(200);

export const orgsRouter = router({
  /** The person's orgs and which one is active. */
  mine: memberProcedure.query(({ ctx }) => guard(() => ctx.services.orgs.mine(ctx.actor))),

  /** Makes another of the person's orgs the active one (every open page follows). */
  switch: memberProcedure.input(z.object({ orgId: Id })).mutation(({ ctx, input }) => guard(() => ctx.services.orgs.switch(ctx.actor, input.orgId))),

  create: memberProcedure.input(z.object({ name: z.string().max(200) })).mutation(({ ctx, input }) => guard(() => ctx.services.orgs.create(ctx.actor, input.name))),

  /** The active org's members, with the roles the asker may give each and whether they may remove them. */
  members: memberProcedure.query(({ ctx }) => guard(() => ctx.services.orgs.members(ctx.actor))),

  changeRole: memberProcedure
    .input(z.object({ memberId: Id, role: Role }))
    .mutation(({ ctx, input }) => guard(() => ctx.services.orgs.changeRole(ctx.actor, input.memberId, input.role))),

  remove: memberProcedure.input(z.object({ memberId: Id })).mutation(({ ctx, input }) => guard(() => ctx.services.orgs.remove(ctx.actor, input.memberId))),

  leave: memberProcedure.input(z.object({ orgId: Id })).mutation(({ ctx, input }) => guard(() => ctx.services.orgs.leave(ctx.actor, input.orgId))),

  /**
   * A new invitation: its link is in the answer only (show it to copy), and mailed when mail is
   * set up, based at `origin` (the page's) when this server answers to that host.
   */
  invite: memberProcedure
    .input(z.object({ email: z.string().max(320), role: Role, expiresInHours: z.number().int().min(EXPIRY_HOURS.min).max(EXPIRY_HOURS.max).optional(), origin: z.string().max(300).optional() }))
    .mutation(({ ctx, input }) => guard(() => ctx.services.orgs.invitations.create(ctx.actor, input, linkOrigin(input.origin, hostsOf(ctx.services.env))))),

  invitations: memberProcedure.query(({ ctx }) => guard(() => ctx.services.orgs.invitations.list(ctx.actor))),

  revokeInvitation: memberProcedure
    .input(z.object({ invitationId: Id }))
    .mutation(({ ctx, input }) => guard(() => ctx.services.orgs.invitations.revoke(ctx.actor, input.invitationId))),

  /** What an invitation link is for (its holder reads it before signing in or up). */
  invitation: publicProcedure.input(z.object({ token: Token })).query(({ ctx, input }) => guard(() => ctx.services.orgs.invitations.info(input.token))),

  /** The signed-in person joins with a link made for their email; its org becomes the active one. */
  accept: memberProcedure.input(z.object({ token: Token })).mutation(({ ctx, input }) => guard(() => ctx.services.orgs.join(ctx.actor, input.token))),
});
