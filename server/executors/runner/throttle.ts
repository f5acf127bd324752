// Wrong runner tokens, per remote address: a few are free, then the address is refused (HTTP
// 429, no token compared) for a lockout that doubles with every further failure, up to a cap;
// a right token clears the address. The log says each address once per window, with the
// count of what it refused since, instead of a line per attempt.
export interface TokenThrottleOptions {
  /** Failures an address may make before it is locked out (default 5). */
  freeFailures?: number;
  /** How long failures are remembered, and the log's window (default 60 s). */
  windowMs?: number;
  /** The first lockout; each further failure doubles it (default 1 s). */
  baseLockMs?: number;
  maxLockMs?: number;
  /** Addresses remembered at most (the oldest are forgotten first). */
  maxAddresses?: number;
  now?: () => number;
  log?(line: string): void;
}

interface Entry {
  failures: number;
  lastFailure: number;
  lockedUntil: number;
  /** Refusals (wrong token or locked out) not yet in a log line, and when the window's line was written. */
  unlogged: number;
  loggedAt: number;
}

export function createTokenThrottle(options: TokenThrottleOptions = {}) {
  const free = options.freeFailures ?? 5;
  const windowMs = options.windowMs ?? 60_000;
  const base = options.baseLockMs ?? 1_000;
  const max = options.maxLockMs ?? 300_000;
  const cap = options.maxAddresses ?? 10_000;
  const now = options.now ?? Date.now;
  const log = options.log ?? (() => {});
  const entries = new Map<string, Entry>();

  const say = (address: string, e: Entry, t: number) => {
    const locked = e.lockedUntil > t ? `; locked out for ${Math.ceil((e.lockedUntil - t) / 1000)} s` : "";
    log(
      `refused ${e.unlogged} runner connection${e.unlogged === 1 ? "" : "s"} from ${address} (wrong or missing token${locked})`,
    );
    e.unlogged = 0;
    e.loggedAt = t;
  };

  /** Counts a refusal; writes the window's line when the last one is a window old. */
  const refused = (address: string, e: Entry, t: number) => {
    e.unlogged++;
    if (t - e.loggedAt >= windowMs) say(address, e, t);
  };

  const sweep = setInterval(() => {
    const t = now();
    for (const [address, e] of entries) {
      if (e.unlogged > 0 && t - e.loggedAt >= windowMs) say(address, e, t);
      if (t - e.lastFailure >= windowMs && e.lockedUntil <= t && e.unlogged === 0) entries.delete(address);
    }
  }, windowMs);
  sweep.unref();

  return {
    /** Milliseconds the address must still wait before a token is looked at (0: it may try). */
    check(address: string): number {
      const e = entries.get(address);
      const t = now();
      if (!e || e.lockedUntil <= t) return 0;
      refused(address, e, t);
      return e.lockedUntil - t;
    },
    failed(address: string): void {
      const t = now();
      let e = entries.get(address);
      if (e && t - e.lastFailure >= windowMs && e.lockedUntil <= t) e.failures = 0;
      if (!e) {
        if (entries.size >= cap) entries.delete(entries.keys().next().value!);
        entries.set(address, (e = { failures: 0, lastFailure: t, lockedUntil: 0, unlogged: 0, loggedAt: -Infinity }));
      }
      e.failures++;
      e.lastFailure = t;
      if (e.failures > free) e.lockedUntil = t + Math.min(max, base * 2 ** Math.min(30, e.failures - free - 1));
      refused(address, e, t);
    },
    succeeded(address: string): void {
      const e = entries.get(address);
      if (e?.unlogged) say(address, e, now());
      entries.delete(address);
    },
    dispose(): void {
      clearInterval(sweep);
    },
  };
}

export type TokenThrottle = ReturnType<typeof createTokenThrottle>;
