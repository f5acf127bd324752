// Sign-in attempts, limited per account (the email typed) and per address (the connecting
// socket's, never a header the client writes), with rate-limiter-flexible's Prisma store on the
// server's own database (table AuthRateLimit), so every server instance of a PostgreSQL
// deployment counts together and a restart forgets nothing. Each attempt is counted before the
// password is checked (a burst of parallel guesses cannot outrun its own count); a successful
// sign-in gives its points back, so only failures add up. rate-limiter-flexible is loaded by the
// first sign-in, not at start.
// What an unauthenticated client may write is bounded: an email that cannot be an account's is
// refused before any counter (`signInEmail`), the address is counted first and an account is
// counted only from an address still admitted, an account's row is keyed by a hash of its email
// (never the text typed), and expired rows are swept while the limiter is in use.
import { createHash } from "node:crypto";
import type { RateLimiterPrisma } from "rate-limiter-flexible";
import type { Db } from "../../db";

export interface SignInLimits {
  /** Failures per account in `windowSeconds` (default 5). */
  perAccount?: number;
  /** Failures per address in `windowSeconds` (default 30). */
  perAddress?: number;
  windowSeconds?: number;
  /** How often expired counters are deleted, from the first sign-in until `dispose` (default 5 min). */
  sweepSeconds?: number;
}

export type Admission =
  { ok: true; succeeded(): Promise<void> } | { ok: false; retryAfterSeconds: number; reason: "account" | "address" };

/** The longest address mail can be sent to (RFC 5321's path, less its brackets); the first owner's too. */
export const MAX_EMAIL_LENGTH = 254;
/** Rows deleted per statement: a sweep never holds SQLite's one writer for long. */
const SWEEP_BATCH = 200;

/** The email of a sign-in as accounts are keyed (trimmed, lower case), or null when it cannot be
 *  any account's: not a string, longer than `MAX_EMAIL_LENGTH` (the first owner's limit; mail
 *  cannot reach a longer one), or not shaped like an email (the first owner's pattern, looser than
 *  the one better-auth checks at sign-in and sign-up, so no email it takes is refused here). */
/** The answer to an email `signInEmail` refuses, at sign-in and sign-up alike. */
export const INVALID_EMAIL = {
  code: "INVALID_EMAIL",
  message: `Give a valid email address (at most ${MAX_EMAIL_LENGTH} characters).`,
};

export function signInEmail(value: unknown): string | null {
  if (typeof value !== "string") return null;
  const email = value.trim().toLowerCase();
  // The length first: the pattern is never run on a long string.
  return email.length <= MAX_EMAIL_LENGTH && /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email) ? email : null;
}

/** An account's counter key: a hash (64 characters whatever was typed, and no email in the table). */
const accountKeyOf = (email: string) => createHash("sha256").update(email.trim().toLowerCase(), "utf8").digest("hex");

export function createSignInLimiter(db: Db, limits: SignInLimits = {}, log: (line: string) => void = () => {}) {
  const duration = limits.windowSeconds ?? 15 * 60;
  // The store's own timer is off: the sweep below is this limiter's, stopped by `dispose`.
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

  /** Deletes expired counters in batches. Safe on several instances at once: an expired row counts
   *  for nothing (the store replaces it at its key's next attempt), and each delete re-checks the
   *  expiry, so a row renewed since it was listed stays. */
  async function sweep(): Promise<number> {
    const now = new Date();
    let deleted = 0;
    for (;;) {
      const rows = await db.authRateLimit.findMany({
        where: { expire: { lt: now } },
        select: { key: true },
        take: SWEEP_BATCH,
      });
      if (rows.length === 0) return deleted;
      const { count } = await db.authRateLimit.deleteMany({
        where: { key: { in: rows.map((r) => r.key) }, expire: { lt: now } },
      });
      deleted += count;
      if (rows.length < SWEEP_BATCH) return deleted;
    }
  }

  let timer: NodeJS.Timeout | undefined;
  let sweeping: Promise<unknown> | undefined;
  let disposed = false;
  const sweepSoon = () => {
    sweeping ??= sweep()
      .catch((err: Error) => {
        if (!disposed) log(`sign-in limits: sweeping expired counters failed: ${err.message}`);
      })
      .finally(() => (sweeping = undefined));
  };

  return {
    /** Counts one attempt of `email` from `ip`; refused when either is over its limit. The address
     *  is counted first: an address already refused adds no account's counter. */
    async admit(email: string, ip: string): Promise<Admission> {
      const { account, address } = await (made ??= make());
      // The first sign-in (here or after a restart) starts the sweep; a server nobody signs in to
      // writes no counters, so it needs none.
      if (!timer && !disposed) {
        timer = setInterval(sweepSoon, (limits.sweepSeconds ?? 5 * 60) * 1000);
        timer.unref();
        sweepSoon();
      }
      const byAddress = await attempt(address, ip);
      if (byAddress !== null) return { ok: false, retryAfterSeconds: byAddress, reason: "address" };
      const accountKey = accountKeyOf(email);
      const byAccount = await attempt(account, accountKey);
      if (byAccount !== null) return { ok: false, retryAfterSeconds: byAccount, reason: "account" };
      return {
        ok: true,
        succeeded: async () => {
          await Promise.all([account.delete(accountKey), address.reward(ip, 1)]);
        },
      };
    },
    /** Deletes the expired counters now (the timer does it every `sweepSeconds`); how many went. */
    sweep,
    /** Stops the sweep timer (server/app.ts stops accounts, and so this, when the server stops). */
    dispose(): void {
      disposed = true;
      clearInterval(timer);
      timer = undefined;
    },
  };
}

export type SignInLimiter = ReturnType<typeof createSignInLimiter>;
