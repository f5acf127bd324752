// Single sign-on for an org with OpenID Connect: better-auth's SSO plugin does the protocol
// (authorization redirect with state and PKCE, code exchange, ID token validation against the
// IdP's JWKS, userinfo, account rows, the session); Quiver decides who gets in:
//  - only the plugin's sign-in and callback endpoints exist: its own provider registration,
//    update, listing and SAML routes are left out (a signed-in person could otherwise register
//    an IdP for any domain and be linked into other people's accounts); an org's provider row is
//    written only by the `sso.*` tRPC procedures for its owners and admins (services/sso.ts);
//  - the IdP's email must be in a domain DNS proved the org's (SsoVerifiedDomain, asked directly:
//    SsoProvider.domain is only the copy the plugin finds an org by) and verified by the IdP
//    (`email_verified`), else the callback is refused with a code and a message; the person's
//    email must be in one at every sign-in, so a domain the org stops holding admits no one;
//  - an existing account is linked by that verified email only when the person is a member of
//    the org or has a pending invitation to it (an org's IdP cannot take over strangers'
//    accounts), and of no other org; a new person is created (Quiver's sign-up gate asks
//    `signUpGate`) and joins the org as `member`, which becomes the active org of the new sign-in;
//  - a sign-in through the IdP is refused for a person who has another way in (a password,
//    another org's IdP) and belongs to another org: the org's domains are not proven to be its
//    own, so its IdP vouches only for people who are the org's alone, never for a way into
//    another org.
// The refusals (codes below) reach the page that started the sign-in as `?error=<code>`.
// The plugin's packages (samlify, xml-crypto …) are imported when the plugin is made, which
// accounts/index.ts does with the better-auth instance: never on a server with accounts off.
import type { BetterAuthPlugin } from "better-auth";
import type { Db } from "../../db";
import { decryptProviderReads, ssoSecretKey } from "./sso-secret";
import { emailDomain } from "./sso-rules";
import { holdsDomain } from "../../services/sso-domains";
import { SSO_REFUSALS, type SsoRefusal } from "../../protocol/sso-refusals";

/** better-auth's paths (after /api/auth) a browser calls for SSO. */
export const SSO_BROWSER_PREFIXES = ["/sign-in/sso", "/sso/callback/"];
const CALLBACK_PATH = "/sso/callback/:providerId";

export interface SsoAccountsDeps {
  db: Db;
  /** The data folder's key (auth/crypto.ts): client secrets are encrypted under a key from it. */
  key: Buffer;
  /** Origins of identity providers on loopback or private addresses that may be used anyway
   *  (QUIVER_SSO_PRIVATE_ISSUERS); public ones need no listing. */
  privateIssuers: string[];
}

/** The email a callback's hook refused, kept for that callback's audit event (same request, ms). */
function refusals() {
  const last = new Map<string, { email: string; at: number }>();
  return {
    note: (providerId: string, email: string) => void last.set(providerId, { email, at: Date.now() }),
    take(providerId: string): { email?: string } {
      const e = last.get(providerId);
      last.delete(providerId);
      return e && Date.now() - e.at < 10_000 ? { email: e.email } : {};
    },
  };
}

interface HookContext {
  path?: string;
  params?: Record<string, string>;
}
/** The provider whose callback is running, or null outside an SSO callback. */
const callbackProvider = (ctx: unknown): string | null => {
  const c = ctx as HookContext | null;
  return c?.path === CALLBACK_PATH && typeof c.params?.providerId === "string" ? c.params.providerId : null;
};

export async function ssoAccounts(deps: SsoAccountsDeps) {
  const [{ APIError, createAuthMiddleware }, { sso }] = await Promise.all([
    import("better-auth/api"),
    import("@better-auth/sso"),
  ]);
  function refuse(code: SsoRefusal): never {
    throw new APIError("FORBIDDEN", { code, message: SSO_REFUSALS[code] });
  }
  const { db } = deps;
  const secretKey = ssoSecretKey(deps.key);
  /** New people this process's callbacks admitted, for the sign-up gate asked right after (ms). */
  const admitted = new Map<string, number>();
  const refusedEmail = refusals();
  function refuseFor(providerId: string, email: string, code: SsoRefusal): never {
    refusedEmail.note(providerId, email);
    return refuse(code);
  }

  const providerRow = (providerId: string) => db.ssoProvider.findUnique({ where: { providerId } });
  const inOtherOrg = async (userId: string, orgId: string) =>
    (await db.membership.findFirst({ where: { userId, orgId: { not: orgId } }, select: { id: true } })) !== null;
  async function allowedDomain(providerId: string, email: string) {
    const row = await providerRow(providerId);
    if (!row?.organizationId) refuseFor(providerId, email, "sso_provider_unknown");
    if (!(await holdsDomain(db, row.organizationId, emailDomain(email))))
      refuseFor(providerId, email, "sso_domain_not_allowed");
    return row.organizationId;
  }

  const base = sso({
    // The IdP's `email_verified` reaches the hooks below, which refuse an unverified email; no
    // one but an org's owners and admins can name an IdP (the registration routes are gone).
    trustEmailVerified: true,
    organizationProvisioning: { defaultRole: "member" },
    providersLimit: 0,
  });
  // Its declared type leaves out what every plugin object has at run time (init, hooks).
  const baseInit = (base as unknown as BetterAuthPlugin).init;
  const baseHooks = (base as unknown as BetterAuthPlugin).hooks ?? {};

  const plugin = {
    ...base,
    endpoints: { signInSSO: base.endpoints.signInSSO, callbackSSO: base.endpoints.callbackSSO },
    init(ctx) {
      const inherited = baseInit?.(ctx) as { context?: Record<string, unknown> } | undefined;
      decryptProviderReads(ctx.adapter, secretKey);
      return {
        context: inherited?.context,
        options: {
          trustedOrigins: deps.privateIssuers,
          // Quiver verifies no email addresses itself, so better-auth's default (link only to an
          // account whose own email was verified) would never link; the rules here decide instead.
          account: { accountLinking: { requireLocalEmailVerified: false } },
          databaseHooks: {
            user: {
              create: {
                async before(user: { email: string; emailVerified?: boolean }, hookCtx: unknown) {
                  const providerId = callbackProvider(hookCtx);
                  if (!providerId) return;
                  // The first account takes over the local owner (first-owner.ts); SSO never makes it.
                  if ((await db.authAccount.count({ take: 1 })) === 0)
                    refuseFor(providerId, user.email, "sso_accounts_off");
                  await allowedDomain(providerId, user.email);
                  if (user.emailVerified !== true) refuseFor(providerId, user.email, "sso_email_unverified");
                  admitted.set(user.email.toLowerCase(), Date.now());
                },
              },
            },
            session: {
              create: {
                async before(session: { userId: string }, hookCtx: unknown) {
                  const providerId = callbackProvider(hookCtx);
                  if (!providerId) return;
                  const row = await providerRow(providerId);
                  const orgId = row?.organizationId;
                  if (!orgId) refuse("sso_provider_unknown");
                  // Every sign-in, not only the first: a person linked through a domain the org
                  // no longer holds (taken off its list, or its DNS proof gone) is let in no more.
                  const email = (await db.user.findUnique({ where: { id: session.userId }, select: { email: true } }))
                    ?.email;
                  if (!email || !(await holdsDomain(db, orgId, emailDomain(email))))
                    refuseFor(providerId, email ?? "", "sso_domain_not_allowed");
                  const otherWayIn = await db.authAccount.findFirst({
                    where: { userId: session.userId, providerId: { not: providerId } },
                    select: { id: true },
                  });
                  if (otherWayIn && (await inOtherOrg(session.userId, orgId)))
                    refuseFor(providerId, email, "sso_account_in_other_orgs");
                },
              },
            },
            account: {
              create: {
                async before(account: { providerId: string; userId: string }, hookCtx: unknown) {
                  const providerId = callbackProvider(hookCtx);
                  if (!providerId || account.providerId !== providerId) return;
                  const user = await db.user.findUnique({
                    where: { id: account.userId },
                    select: { email: true, emailVerified: true },
                  });
                  if (!user) refuse("sso_provider_unknown");
                  const orgId = await allowedDomain(providerId, user.email);
                  // The person was created by this very callback: nothing to link.
                  if (admitted.delete(user.email)) return;
                  const member = await db.membership.findFirst({
                    where: { userId: account.userId, orgId },
                    select: { id: true },
                  });
                  const invited =
                    member ??
                    (await db.invitation.findFirst({
                      where: { orgId, email: user.email, status: "pending", expiresAt: { gt: new Date() } },
                      select: { id: true },
                    }));
                  if (!invited) refuseFor(providerId, user.email, "sso_account_not_in_org");
                  if (await inOtherOrg(account.userId, orgId))
                    refuseFor(providerId, user.email, "sso_account_in_other_orgs");
                  // On an invitation alone, only an account whose address was proven (made through
                  // an invitation link): anyone could have made one for the invited address
                  // before, with a password of their own (invited-sign-up.ts).
                  if (!member && !user.emailVerified) refuseFor(providerId, user.email, "sso_account_unverified");
                },
              },
            },
          },
        },
      };
    },
    hooks: {
      before: baseHooks.before ?? [],
      after: [
        ...(baseHooks.after ?? []),
        {
          // A sign-in through an org's IdP lands in that org (when the person is a member of it),
          // and every callback, signed in or refused, is an audit event of the org.
          matcher: (c: { path?: string }) => c.path === CALLBACK_PATH,
          handler: createAuthMiddleware(async (c) => {
            const session = c.context.newSession;
            const providerId = c.params?.providerId;
            if (typeof providerId !== "string") return;
            const orgId = (await providerRow(providerId))?.organizationId ?? null;
            if (session && orgId) {
              const member = await db.membership.findFirst({
                where: { userId: session.user.id, orgId },
                select: { id: true },
              });
              if (member)
                await c.context.internalAdapter.updateSession(session.session.token, { activeOrganizationId: orgId });
            }
            const location =
              (c.context.returned as { headers?: Headers } | undefined)?.headers?.get?.("location") ?? "";
            const error = session ? null : (new URL(location, "http://x").searchParams.get("error") ?? "unknown");
            await db.auditEvent.create({
              data: {
                orgId,
                actorId: session?.user.id ?? null,
                action: session ? "auth.signed_in" : "auth.sign_in_failed",
                target: `sso:${providerId}`,
                detail: { method: "sso", ...(error ? { reason: error, ...refusedEmail.take(providerId) } : {}) },
              },
            });
          }),
        },
      ],
    },
  } satisfies BetterAuthPlugin;

  return {
    plugin: plugin as BetterAuthPlugin,
    browserPrefixes: SSO_BROWSER_PREFIXES,
    /** Quiver's sign-up gate: yes for the person an SSO callback admitted a moment ago. */
    async signUpGate(email: string): Promise<boolean> {
      const at = admitted.get(email.toLowerCase());
      for (const [k, t] of admitted) if (Date.now() - t > 60_000) admitted.delete(k);
      return at !== undefined && Date.now() - at < 60_000;
    },
  };
}
