// The better-auth instance of a Quiver server with accounts: email + password, the organization
// plugin (roles owner / admin / member), and its tables mapped onto ours (prisma/schema.prisma):
// better-auth's user / organization / member are our User / Org / Membership, so every foreign
// key that names a person or an org keeps working; its session / account / verification are
// AuthSession / AuthAccount / AuthVerification ("Session" is the IDE's).
// Other slices add plugins to `extraPlugins` (the SSO plugin) and gate sign-ups with `signUpGate`.
// better-auth (with kysely, jose and the rest: about 300 files) is imported only when an instance
// is made, which a server with accounts off never does: loading it was a second of every start.
import type { BetterAuthPlugin } from "better-auth";
import type { organization } from "better-auth/plugins/organization";
import type { Db, DbProvider } from "../../db";

/** Set by accounts/index.ts on every request it hands to better-auth, from the socket. */
export const CLIENT_ADDRESS_HEADER = "x-quiver-client-address";

/** How long a signed-in device stays signed in without use, and how often its expiry is pushed on. */
export const SESSION_DAYS = 30;

export interface AccountsInstanceDeps {
  db: Db;
  provider: DbProvider;
  /** better-auth's secret (derived from the data folder's cookie key). */
  secret: string;
  /** A reset link for `email` (the mailer sends it, or the log shows it). */
  sendResetPassword(data: { email: string; name: string; url: string }): Promise<void>;
  /** May a person with this email get a new User row, through this endpoint (better-auth's path, e.g. "/sign-up/email")? */
  signUpGate(email: string, path: string | undefined): Promise<boolean>;
  /** Host names the server answers to (QUIVER_ALLOWED_HOSTS and a loopback HOST): its base URL is one of them. */
  allowedHosts: string[];
  /** A new person (not the first owner, who takes over the local owner's row) was created. */
  onUserCreated?(user: { id: string; email: string; name: string }): Promise<void>;
  /** Plugins other parts add (the SSO plugin). */
  extraPlugins?: BetterAuthPlugin[];
  /** Invitation emails (the organization plugin calls it when an admin invites). */
  sendInvitationEmail?: Parameters<typeof organization>[0] extends infer O
    ? O extends { sendInvitationEmail?: infer F }
      ? F
      : never
    : never;
}

/** The query thread's client runs single queries and batches, not interactive transactions:
 *  hidden from the adapter, which then claims one-time values with a conditional delete. */
function withoutInteractiveTransactions(db: Db): Db {
  return new Proxy(db, {
    get: (target, prop, receiver) => (prop === "$transaction" ? undefined : Reflect.get(target, prop, receiver)),
  });
}

async function organizationPlugin(deps: Pick<AccountsInstanceDeps, "sendInvitationEmail">) {
  const { organization } = await import("better-auth/plugins/organization");
  return organization({
    creatorRole: "owner",
    // An org is made for each new person by Quiver itself (accounts/service.ts); more by hand too.
    allowUserToCreateOrganization: true,
    invitationExpiresIn: 7 * 24 * 3600,
    cancelPendingInvitationsOnReInvite: true,
    sendInvitationEmail: deps.sendInvitationEmail,
    schema: {
      organization: { modelName: "org" },
      member: { modelName: "membership", fields: { organizationId: "orgId" } },
      invitation: { modelName: "invitation", fields: { organizationId: "orgId" } },
    },
  });
}

export async function createAccountsInstance(deps: AccountsInstanceDeps) {
  const [{ betterAuth }, { prismaAdapter }, organization] = await Promise.all([
    import("better-auth"),
    import("@better-auth/prisma-adapter"),
    organizationPlugin(deps),
  ]);
  return betterAuth({
    appName: "Quiver",
    secret: deps.secret,
    basePath: "/api/auth",
    // Links (password reset) use the host the person reached, among the allowed (already checked
    // by server/http/guard.ts); better-auth trusts these origins, on any port, for its redirects.
    baseURL: {
      allowedHosts: deps.allowedHosts.flatMap((h) =>
        h === "*" ? ["*"] : [h.includes(":") ? `[${h}]` : h, `${h.includes(":") ? `[${h}]` : h}:*`],
      ),
      protocol: "auto",
    },
    database: prismaAdapter(withoutInteractiveTransactions(deps.db), { provider: deps.provider }),
    user: { modelName: "user" },
    session: {
      modelName: "authSession",
      expiresIn: SESSION_DAYS * 86_400,
      updateAge: 86_400,
      // Every request reads the row: a revoked device is signed out at its next request.
      cookieCache: { enabled: false },
    },
    // Tokens an identity provider hands over (SSO) are kept encrypted in AuthAccount.
    account: {
      modelName: "authAccount",
      encryptOAuthTokens: true,
      accountLinking: { enabled: true, trustedProviders: ["email-password"] },
    },
    verification: { modelName: "authVerification" },
    emailAndPassword: {
      enabled: true,
      minPasswordLength: 10,
      maxPasswordLength: 256,
      autoSignIn: true,
      revokeSessionsOnPasswordReset: true,
      resetPasswordTokenExpiresIn: 3600,
      sendResetPassword: async ({ user, url }) => deps.sendResetPassword({ email: user.email, name: user.name, url }),
    },
    // Sign-in attempts are limited by Quiver itself, on the database (accounts/rate-limit.ts).
    rateLimit: { enabled: false },
    advanced: {
      cookiePrefix: "quiver",
      // One cookie name here: over https the HTTP boundary names it __Host-… and adds Secure
      // (auth/cookie-jar.ts), which a plain-http LAN address could not take.
      useSecureCookies: false,
      ipAddress: { ipAddressHeaders: [CLIENT_ADDRESS_HEADER] },
    },
    databaseHooks: {
      user: {
        create: {
          before: async (user, ctx) => {
            if (!(await deps.signUpGate(String(user.email).toLowerCase(), ctx?.path))) return false;
            return { data: user };
          },
          after: async (user) => {
            await deps.onUserCreated?.({ id: user.id, email: user.email, name: user.name });
          },
        },
      },
    },
    plugins: [organization, ...(deps.extraPlugins ?? [])],
    logger: { disabled: process.env.NODE_ENV === "test" },
  });
}

export type AccountsInstance = Awaited<ReturnType<typeof createAccountsInstance>>;
