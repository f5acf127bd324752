// Sign-in attempts, limited per account (the email typed) and per address (the connecting
// socket's, never a header the client writes), with rate-limiter-flexible's Prisma store on the
// server's own database (table AuthRateLimit), so every server instance of a PostgreSQL
// deployment counts together and a restart forgets nothing. Each attempt is counted before the
// password is checked (a burst of parallel guesses cannot outrun its own count); a successful
// sign-in gives its points back, so only failures add up. rate-limiter-flexible is loaded by the
// first sign-in, not at start.
import type { RateLimiterPrisma } from "rate-limiter-flexible";
import type { Db } from "../../db";

export interface SignInLimits {
  /** Failures per account in `windowSeconds` (default 5). */
  perAccount?: number;
  /** Failures per address in `windowSeconds` (default 30). */
  perAddress?: number;
  windowSeconds?: number;
}

export type Admission =
  { ok: true; succeeded(): Promise<void> } | { ok: false; retryAfterSeconds: number; reason: "account" | "address" };

export function createSignInLimiter(db: Db, limits: SignInLimits = {}) {
  const duration = limits.windowSeconds ?? 15 * 60;
  const common = { storeClient: db, tableName: "authRateLimit", duration, clearExpiredByTimeout: false };
  let made: ReturnType<typeof make> | undefined;
  async function make() {
    const { RateLimiterPrisma, RateLimiterRes } = await import("rate-limiter-flexible");
    return {
      RateLimiterRes,
      account: new RateLimiterPrisma({ ...common, keyPrefix: "signin-account", points: limits.perAccount ?? 5 }),
      address: new RateLimiterPrisma({ ...common, keyPrefix: "signin-address", points: limits.perAddress ?? 30 }),
    };
  }

  const attempt = async (limiter: RateLimiterPrisma, key: string): Promise<number | null> => {
    try {
      await limiter.consume(key, 1);
      return null;
    } catch (res) {
      if (res instanceof (await (made ??= make())).RateLimiterRes)
        return Math.max(1, Math.ceil(res.msBeforeNext / 1000));
      throw res;
    }
  };

  return {
    /** Counts one attempt of `email` from `ip`; refused when either is over its limit. */
    async admit(email: string, ip: string): Promise<Admission> {
      const { account, address } = await (made ??= make());
      const accountKey = email.trim().toLowerCase();
      const [byAddress, byAccount] = await Promise.all([attempt(address, ip), attempt(account, accountKey)]);
      if (byAccount !== null) return { ok: false, retryAfterSeconds: byAccount, reason: "account" };
      if (byAddress !== null) return { ok: false, retryAfterSeconds: byAddress, reason: "address" };
      return {
        ok: true,
        succeeded: async () => {
          await Promise.all([account.delete(accountKey), address.reward(ip, 1)]);
        },
      };
    },
    /** Old counters go (called now and then; the store's own timer is off so tests stop cleanly). */
    async sweep(): Promise<void> {
      await db.authRateLimit.deleteMany({ where: { expire: { lt: new Date(Date.now() - 3_600_000) } } });
    },
  };
}

export type SignInLimiter = ReturnType<typeof createSignInLimiter>;
