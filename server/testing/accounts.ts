// Tests sign people in without a password: a better-auth session row made by better-auth's own
// adapter, and the cookie a browser would hold for it (the token with its HMAC, as better-auth
// signs it). Revoking it is what the devices page does (accounts.revokeDevice).
import { createHmac } from "node:crypto";
import type { Accounts } from "../auth/accounts/index";

export interface TestSignIn {
  /** The Cookie header value. */
  cookie: string;
  authSessionId: string;
  /** Signs this device out as the devices page does (row deleted, sockets ended). */
  revoke(): Promise<void>;
}

export async function signInAs(
  accounts: Pick<Accounts, "instance" | "revokeDevice">,
  userId: string,
  options: { orgId?: string } = {},
): Promise<TestSignIn> {
  const ctx = await (await accounts.instance()).$context;
  const session = await ctx.internalAdapter.createSession(userId);
  if (options.orgId) await ctx.internalAdapter.updateSession(session.token, { activeOrganizationId: options.orgId });
  const signature = createHmac("sha256", ctx.secret).update(session.token).digest("base64");
  const cookie = `${ctx.authCookies.sessionToken.name}=${encodeURIComponent(`${session.token}.${signature}`)}`;
  return {
    cookie,
    authSessionId: session.id,
    revoke: async () => void (await accounts.revokeDevice(userId, session.id)),
  };
}
