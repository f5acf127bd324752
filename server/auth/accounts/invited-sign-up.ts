// Sign-up through an invitation link: the link's token admits an account for the invited address,
// the address alone never does (anyone may know or guess it, and the account made first for it
// would be linked later to the real person's single sign-on). The token proves the address as
// much as a mailed link can, so the account made with it counts as verified: single sign-on may
// link to it on an invitation (sso.ts), and to no unverified account that way.
import type { Db } from "../../db";
import { hashToken } from "../crypto";

/** How long an admitted sign-up waits for better-auth's gate to ask about it. */
const ADMITTED_MS = 60_000;

export interface InvitedSignUps {
  /** A pending, unexpired invitation of this token for this address: admits one sign-up of it. */
  admit(token: string, email: string): Promise<boolean>;
  /** Whether the address was admitted a moment ago; `take` uses the admission up. */
  admitted(email: string, use: "peek" | "take"): boolean;
  /** The account made through the link has a proven address. */
  verified(email: string): Promise<void>;
}

export function createInvitedSignUps(db: Db): InvitedSignUps {
  const admitted = new Map<string, number>();
  const fresh = (email: string) => {
    const at = admitted.get(email);
    for (const [k, t] of admitted) if (Date.now() - t > ADMITTED_MS) admitted.delete(k);
    return at !== undefined && Date.now() - at <= ADMITTED_MS;
  };
  return {
    async admit(token, email) {
      if (!token || token.length > 200) return false;
      const invitation = await db.invitation.findUnique({
        where: { id: hashToken(token) },
        select: { email: true, status: true, expiresAt: true },
      });
      const valid =
        invitation !== null &&
        invitation.status === "pending" &&
        invitation.expiresAt.getTime() > Date.now() &&
        invitation.email.toLowerCase() === email;
      if (valid) admitted.set(email, Date.now());
      return valid;
    },
    admitted(email, use) {
      const ok = fresh(email);
      if (ok && use === "take") admitted.delete(email);
      return ok;
    },
    async verified(email) {
      await db.user.updateMany({ where: { email }, data: { emailVerified: true } });
    },
  };
}
