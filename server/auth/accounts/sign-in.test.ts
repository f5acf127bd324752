// Accounts' HTTP side on both databases, with a server of its own around createAccounts:
// sign-in failures limited per account and per address (the counters in the database), the
// reset link mailed through a real SMTP server started here, HOST off loopback requiring
// accounts before any exists, and only the allowed paths reaching better-auth however spelled.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createServer, request, type Server } from "node:http";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";
import { parseEnv } from "../../env";
import { createTestDb, testDatabases, type TestDb } from "../../testing/db";
import { ensureLocalActor } from "../../services/local-user";
import { loadSecret } from "../crypto";
import { createAccounts, type Accounts } from "./index";

const ADA = { name: "Ada", email: "ada@example.com", password: "correct horse battery" };

describe.each(testDatabases())("sign-in limits and reset mail on %s", (provider) => {
  let db: TestDb & { dispose(): Promise<void> };
  let accounts: Accounts;
  let server: Server;
  let smtp: SMTPServer;
  let url = "";
  const mails: string[] = [];
  const logs: string[] = [];
  const post = (path: string, body: unknown) =>
    fetch(`${url}/api/auth${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: url },
      body: JSON.stringify(body),
    });

  beforeAll(async () => {
    smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ["STARTTLS", "AUTH"],
      onData: (stream, _s, done) => {
        let t = "";
        stream.on("data", (c) => (t += c));
        stream.on("end", () => (mails.push(t), done()));
      },
    });
    await new Promise<void>((r) => smtp.listen(0, "127.0.0.1", r));
    const smtpPort = (smtp.server.address() as AddressInfo).port;
    db = await createTestDb(provider);
    await ensureLocalActor(db.db);
    const dataDir = mkdtempSync(join(tmpdir(), "quiver-signin-"));
    const env = parseEnv({ QUIVER_DATA_DIR: dataDir, QUIVER_SMTP_URL: `smtp://127.0.0.1:${smtpPort}` });
    accounts = await createAccounts({
      env,
      db: db.db,
      provider,
      key: loadSecret(dataDir),
      log: (l) => logs.push(l),
      limits: { perAccount: 3, perAddress: 8 },
    });
    server = createServer((req, res) => void (accounts.handle(req, res) || res.writeHead(404).end()));
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    expect((await post("/first-owner", ADA)).status).toBe(200);
  }, 60_000);
  afterAll(async () => {
    server?.close();
    accounts?.dispose();
    await new Promise<void>((r) => smtp.close(() => r()));
    await db?.dispose();
  });

  it("refuses an account after 3 failures, even with the right password, and an address after 8", async () => {
    for (let i = 0; i < 3; i++)
      expect((await post("/sign-in/email", { email: ADA.email, password: "wrong password" })).status).toBe(401);
    const refused = await post("/sign-in/email", { email: ADA.email, password: ADA.password });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((await refused.json()).message).toMatch(/account/);
    // Address: 4 counted so far (3 failures, 1 refused); other emails fail until the 8th.
    for (let i = 0; i < 4; i++)
      expect(
        (await post("/sign-in/email", { email: `nobody${i}@example.com`, password: "wrong password" })).status,
      ).toBe(401);
    const byAddress = await post("/sign-in/email", { email: "someone@example.com", password: "wrong password" });
    expect(byAddress.status).toBe(429);
    expect((await byAddress.json()).message).toMatch(/address/);
    expect(await db.db.authRateLimit.count()).toBeGreaterThan(0); // counted in the database
    await db.db.authRateLimit.deleteMany({});
    expect((await post("/sign-in/email", ADA)).status).toBe(200);
  });

  it("refuses a path that resolves to another endpoint (../, %2e, a prefix's second segment), uncounted", async () => {
    // Sent byte for byte: fetch would resolve the dots before sending.
    const raw = (path: string, body: unknown) =>
      new Promise<number>((resolve, reject) => {
        const text = JSON.stringify(body);
        const u = new URL(url);
        const r = request(
          {
            host: u.hostname,
            port: u.port,
            method: "POST",
            path,
            headers: { "content-type": "application/json", origin: url, "content-length": Buffer.byteLength(text) },
          },
          (res) => (res.resume(), resolve(res.statusCode ?? 0)),
        );
        r.on("error", reject);
        r.end(text);
      });
    await db.db.authRateLimit.deleteMany({});
    const wrong = { email: ADA.email, password: "wrong password" };
    for (const path of [
      "/api/auth/reset-password/../sign-in/email",
      "/api/auth/reset-password/%2e%2e/sign-in/email",
      "/api/auth/reset-password/%2E%2E/organization/update-member-role",
      "/api/auth/reset-password/x/../../list-sessions",
      "/api/auth/reset-password/..%2fsign-in%2femail",
      "/api/auth/sign-in/sso/../../organization/update",
      "/api/auth/sign-in/ssox",
      "/api/auth/sso/callback/org-1/../../../update-user",
      "/api/auth/sign-out/../organization/remove-member",
    ])
      for (let i = 0; i < 4; i++) expect(await raw(path, wrong), path).toBe(404);
    expect(await db.db.authRateLimit.count()).toBe(0);
    // The limit still holds on the path itself, and the right password still works there.
    for (let i = 0; i < 3; i++) expect(await raw("/api/auth/sign-in/email", wrong)).toBe(401);
    expect(await raw("/api/auth/sign-in/email", ADA)).toBe(429);
    await db.db.authRateLimit.deleteMany({});
    expect(await raw("/api/auth/sign-in/email", ADA)).toBe(200);
  });

  it("mails a reset link by SMTP that sets a new password once and signs every device out", async () => {
    const signedIn = (await post("/sign-in/email", ADA)).headers.getSetCookie()[0].split(";")[0];
    expect((await post("/request-password-reset", { email: ADA.email, redirectTo: "/signin/reset" })).status).toBe(200);
    await expect.poll(() => mails.length, { timeout: 10_000 }).toBe(1);
    const link = /(http:\/\/127\.0\.0\.1:\d+\/api\/auth\/reset-password\/[^\s?]+\?callbackURL=[^\s]+)/.exec(
      mails[0].replace(/=\r?\n/g, "").replace(/=3D/g, "="),
    )?.[1];
    expect(link).toBeTruthy();
    const opened = await fetch(link!, { redirect: "manual" });
    expect(opened.status).toBe(302);
    const token = new URL(opened.headers.get("location")!, url).searchParams.get("token")!;
    expect(new URL(opened.headers.get("location")!, url).pathname).toBe("/signin/reset");
    expect((await post("/reset-password", { token, newPassword: "a brand new password" })).status).toBe(200);
    expect((await post("/reset-password", { token, newPassword: "another new password" })).status).toBe(400);
    expect((await post("/sign-in/email", ADA)).status).toBe(401);
    expect((await post("/sign-in/email", { email: ADA.email, password: "a brand new password" })).status).toBe(200);
    expect(await accounts.personOf({ headers: { cookie: signedIn, host: new URL(url).host } } as never)).toBeNull();
    // A redirect to another site is refused before better-auth sees it.
    expect(
      (await post("/request-password-reset", { email: ADA.email, redirectTo: "https://evil.example/x" })).status,
    ).toBe(400);
  });

  it("with HOST off loopback, accounts are required before any exists", async () => {
    const other = await createTestDb(provider);
    try {
      const dataDir = mkdtempSync(join(tmpdir(), "quiver-host-"));
      const off = await createAccounts({
        env: parseEnv({ QUIVER_DATA_DIR: dataDir, HOST: "0.0.0.0" }),
        db: other.db,
        provider,
        key: loadSecret(dataDir),
        log: () => {},
      });
      expect(off.required).toBe(true);
      expect(await off.on()).toBe(true);
      expect(await off.setupPath()).toMatch(/^\/signup\?setup=[A-Za-z0-9_-]{32}$/);
      const local = await createAccounts({
        env: parseEnv({ QUIVER_DATA_DIR: dataDir }),
        db: other.db,
        provider,
        key: loadSecret(dataDir),
        log: () => {},
      });
      expect(await local.on()).toBe(false);
      off.dispose();
      local.dispose();
    } finally {
      await other.dispose();
    }
  });
});
