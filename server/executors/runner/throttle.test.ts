// Guessing runner tokens: a real HTTP server with the pool on /runner, real WebSocket upgrades
// from one address. After a few wrong tokens the address is refused (429) without a token
// compared, even a right one, until its lockout passes; the log has a line per address per
// window, not one per attempt.
import { afterEach, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { startServer, TEST_TOKEN, type TestServer } from "../../testing/runner";
import { createTokenThrottle } from "./throttle";

const servers: TestServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

function upgrade(url: string, token: string): Promise<{ status: number; retryAfter?: string }> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, { headers: { authorization: `Bearer ${token}` } });
    ws.on("unexpected-response", (_req, res) => {
      resolve({ status: res.statusCode ?? 0, retryAfter: res.headers["retry-after"] as string | undefined });
      ws.terminate();
    });
    ws.on("open", () => {
      resolve({ status: 101 });
      ws.terminate();
    });
    ws.on("error", () => {});
  });
}

describe("wrong runner tokens", () => {
  it("lock the address out after a few, refuse even the right token meanwhile, and log once per window", async () => {
    // A lockout long enough to outlast 40 upgrades on a loaded machine (1.5 s did not at load 30).
    const s = await startServer({ throttle: { freeFailures: 5, baseLockMs: 6_000, windowMs: 60_000 } });
    servers.push(s);
    const statuses: number[] = [];
    for (let i = 0; i < 40; i++) statuses.push((await upgrade(s.url, `wrong-token-${i}-xxxxxxxx`)).status);
    expect(statuses.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
    // The sixth wrong token starts the lockout; everything after it in the lockout is 429.
    expect(statuses[5]).toBe(401);
    expect(statuses.slice(6).every((st) => st === 429)).toBe(true);
    const locked = await upgrade(s.url, TEST_TOKEN);
    expect(locked.status).toBe(429);
    expect(Number(locked.retryAfter)).toBeGreaterThanOrEqual(1);
    const lines = s.logs.filter((l) => l.includes("runner connection"));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/refused 1 runner connection from (::ffff:)?127\.0\.0\.1/);

    // Once the lockout passes, the right token gets in and clears the address.
    await new Promise((r) => setTimeout(r, 6_100));
    expect((await upgrade(s.url, TEST_TOKEN)).status).toBe(101);
    expect((await upgrade(s.url, "wrong-again-xxxxxxxxxxxx")).status).toBe(401);
  });

  it("doubles the lockout with each further failure, up to the cap, and reports the count a window later", () => {
    let t = 0;
    const lines: string[] = [];
    const th = createTokenThrottle({
      freeFailures: 2,
      baseLockMs: 1_000,
      maxLockMs: 8_000,
      windowMs: 60_000,
      now: () => t,
      log: (l) => lines.push(l),
    });
    try {
      th.failed("a");
      th.failed("a");
      expect(th.check("a")).toBe(0);
      const locks: number[] = [];
      for (let i = 0; i < 6; i++) {
        th.failed("a");
        locks.push(th.check("a"));
        t += locks[i];
      }
      expect(locks).toEqual([1_000, 2_000, 4_000, 8_000, 8_000, 8_000]);
      expect(th.check("b")).toBe(0);
      expect(lines).toHaveLength(1);
      t += 60_000;
      th.failed("a");
      expect(lines).toHaveLength(2);
      expect(lines[1]).toMatch(/^refused 1[0-9] runner connections from a/);
    } finally {
      th.dispose();
    }
  });
});
