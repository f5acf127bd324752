// The sign-in counters' footprint on both databases (rate-limit.ts): what an unauthenticated
// client can make the server write is bounded and goes again. A review measured the opposite (2,000
// sign-ins with distinct 60 KB emails: 2,001 rows, 238 MB, for good), so these check that an email
// no account can have writes nothing, that an address already refused adds no account's counter,
// that an account's key is a hash whatever was typed, and that expired counters are deleted, by
// several instances at once too. sign-in.test.ts has the limits themselves.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createServer, type Server } from "node:http";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { addressKey } from "../../http/address-key";
import type { AddressInfo } from "node:net";
import { parseEnv } from "../../env";
import { createTestDb, testDatabases, type TestDb } from "../../testing/db";
import { ensureLocalActor } from "../../services/local-user";
import { loadSecret } from "../crypto";
import { createAccounts, type Accounts } from "./index";
import { createSignInLimiter, signInEmail, MAX_EMAIL_LENGTH } from "./rate-limit";

const longEmail = (length: number) => `${"a".repeat(length - "@example.com".length)}@example.com`;

describe("signInEmail", () => {
  it("keeps any email an account can have, trimmed and in lower case", () => {
    expect(signInEmail(" Ada@Example.COM ")).toBe("ada@example.com");
    expect(signInEmail(longEmail(MAX_EMAIL_LENGTH))).toBe(longEmail(MAX_EMAIL_LENGTH));
  });
  it("refuses what no account can have: too long, not an email, not a string", () => {
    for (const value of [longEmail(MAX_EMAIL_LENGTH + 1), longEmail(60_000), "ada", "ada@example", "a b@x.io", "", 5])
      expect(signInEmail(value), String(value).slice(0, 20)).toBeNull();
  });
});

describe.each(testDatabases())("sign-in counters on %s", (provider) => {
  let db: TestDb & { dispose(): Promise<void> };
  const rows = (prefix: "signin-account" | "signin-address") =>
    db.db.authRateLimit.findMany({ where: { key: { startsWith: `${prefix}:` } } });

  beforeAll(async () => {
    db = await createTestDb(provider);
  }, 60_000);
  afterAll(async () => {
    await db?.dispose();
  });
  beforeEach(async () => {
    await db.db.authRateLimit.deleteMany({});
  });

  it("counts no account from an address already refused", async () => {
    const limiter = createSignInLimiter(db.db, { perAddress: 2, perAccount: 5 });
    try {
      expect((await limiter.admit("one@example.com", "10.0.0.1")).ok).toBe(true);
      expect((await limiter.admit("two@example.com", "10.0.0.1")).ok).toBe(true);
      // A refused address spraying new emails: each of these used to add an account's row too.
      for (let i = 0; i < 5; i++)
        expect(await limiter.admit(`spray${i}@example.com`, "10.0.0.1")).toMatchObject({
          ok: false,
          reason: "address",
        });
      expect(await rows("signin-account")).toHaveLength(2);
      // Another address is still counted per account.
      expect((await limiter.admit("three@example.com", "10.0.0.2")).ok).toBe(true);
      expect(await rows("signin-account")).toHaveLength(3);
    } finally {
      limiter.dispose();
    }
  });

  it("counts every address of one IPv6 /64 together, as the server keys a connection", async () => {
    const limiter = createSignInLimiter(db.db, { perAddress: 2, perAccount: 5 });
    try {
      // A client given a /64 rotating its low bits (privacy addresses) for each guess.
      expect((await limiter.admit("a@example.com", addressKey("2001:db8:5:6::1"))).ok).toBe(true);
      expect((await limiter.admit("b@example.com", addressKey("2001:db8:5:6::2"))).ok).toBe(true);
      expect(await limiter.admit("c@example.com", addressKey("2001:db8:5:6:aaaa::3"))).toMatchObject({
        ok: false,
        reason: "address",
      });
      expect((await limiter.admit("d@example.com", addressKey("2001:db8:5:7::1"))).ok).toBe(true);
    } finally {
      limiter.dispose();
    }
  });

  it("keys an account by a hash of its email, however long the text typed", async () => {
    const limiter = createSignInLimiter(db.db);
    try {
      // admit is called with checked emails (index.ts); its key is bounded even if it is not.
      await limiter.admit(longEmail(60_000), "10.0.0.1");
      await limiter.admit("  ADA@example.com", "10.0.0.1");
      await limiter.admit("ada@example.com", "10.0.0.1");
      const keys = (await rows("signin-account")).map((r) => r.key);
      // One row for Ada, however spelled: the key is of the normalized email.
      expect(keys).toHaveLength(2);
      for (const key of keys) expect(key).toMatch(/^signin-account:[0-9a-f]{64}$/);
      expect((await rows("signin-account")).map((r) => r.points).sort()).toEqual([1, 2]);
    } finally {
      limiter.dispose();
    }
  });

  it("deletes expired counters and keeps live ones, with several instances sweeping at once", async () => {
    const past = new Date(Date.now() - 1_000); // expired a second ago, not an hour
    const future = new Date(Date.now() + 60_000);
    // More than one batch, so the instances' batches overlap.
    await db.db.authRateLimit.createMany({
      data: Array.from({ length: 1_200 }, (_, i) => ({ key: `signin-account:old${i}`, points: 1, expire: past })),
    });
    await db.db.authRateLimit.createMany({
      data: Array.from({ length: 5 }, (_, i) => ({ key: `signin-address:live${i}`, points: 1, expire: future })),
    });
    const limiters = [createSignInLimiter(db.db), createSignInLimiter(db.db), createSignInLimiter(db.db)];
    const deleted = await Promise.all(limiters.map((l) => l.sweep()));
    expect(deleted.reduce((a, b) => a + b, 0)).toBe(1_200);
    expect(await db.db.authRateLimit.count()).toBe(5);
  });

  it("sweeps by itself from the first sign-in on, until disposed", async () => {
    const limiter = createSignInLimiter(db.db, { windowSeconds: 1, sweepSeconds: 0.2 });
    try {
      await limiter.admit("ada@example.com", "10.0.0.1");
      expect(await db.db.authRateLimit.count()).toBe(2);
      // The window (1 s) passes and the timer (every 0.2 s) deletes both rows; no sign-in needed.
      await expect.poll(() => db.db.authRateLimit.count(), { timeout: 5_000, interval: 100 }).toBe(0);
    } finally {
      limiter.dispose();
    }
    // Disposed: rows that expire now stay (the server stopping has no timer left behind).
    await db.db.authRateLimit.create({ data: { key: "signin-address:x", points: 1, expire: new Date() } });
    await new Promise((r) => setTimeout(r, 500));
    expect(await db.db.authRateLimit.count()).toBe(1);
  });
});

describe.each(testDatabases())("sign-in's email over HTTP on %s", (provider) => {
  let db: TestDb & { dispose(): Promise<void> };
  let accounts: Accounts;
  let server: Server;
  let url = "";
  const post = (body: unknown) =>
    fetch(`${url}/api/auth/sign-in/email`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: url },
      body: JSON.stringify(body),
    });

  beforeAll(async () => {
    db = await createTestDb(provider);
    await ensureLocalActor(db.db);
    const dataDir = mkdtempSync(join(tmpdir(), "quiver-ratelimit-"));
    accounts = await createAccounts({
      env: parseEnv({ QUIVER_DATA_DIR: dataDir }),
      db: db.db,
      provider,
      key: loadSecret(dataDir),
      log: () => {},
    });
    server = createServer((req, res) => void (accounts.handle(req, res) || res.writeHead(404).end()));
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }, 60_000);
  afterAll(async () => {
    server?.close();
    accounts?.dispose();
    await db?.dispose();
  });

  it("refuses an email no account can have with a 400, writing no counter", async () => {
    // The review's request: a ~60 KB email, under the 64 KB body limit.
    for (const email of [longEmail(60_000), longEmail(MAX_EMAIL_LENGTH + 1), "not an email", 42]) {
      const answer = await post({ email, password: "wrong password" });
      expect(answer.status).toBe(400);
      expect(await answer.json()).toMatchObject({ code: "INVALID_EMAIL" });
    }
    expect(await db.db.authRateLimit.count()).toBe(0);
    // An email that could be an account's is counted (once per address, once per account).
    expect((await post({ email: "nobody@example.com", password: "wrong password" })).status).toBe(401);
    expect(await db.db.authRateLimit.count()).toBe(2);
  }, 30_000);

  it("refuses the same emails at sign-up, so no account has one it could never sign in with", async () => {
    const people = await db.db.user.count();
    for (const email of [longEmail(MAX_EMAIL_LENGTH + 1), "not an email"]) {
      const answer = await fetch(`${url}/api/auth/sign-up/email`, {
        method: "POST",
        headers: { "content-type": "application/json", origin: url },
        body: JSON.stringify({ email, password: "a long enough password", name: "Someone" }),
      });
      expect(answer.status).toBe(400);
      expect(await answer.json()).toMatchObject({ code: "INVALID_EMAIL" });
    }
    expect(await db.db.user.count()).toBe(people);
  }, 30_000);
});
