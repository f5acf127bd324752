// Accounts against the real server on both databases: off by default (loopback is the local
// owner, as ever); the first account takes over the local owner with every session, event,
// policy version, audit row and share link kept; from then on loopback is nobody and a person's
// cookie is them, across a restart; signing a device out closes its open socket at once.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import WebSocket from "ws";
import { createTRPCClient, httpBatchLink } from "@trpc/client";
import { testServerEnv } from "../../testing/env";
import { startQuiver, type Quiver } from "../../app";
import type { AppRouter } from "../../api/root";
import { createTestDb, testDatabases, type TestDb } from "../../testing/db";
import { SIGNED_OUT_CLOSE } from "./sockets";

const root = join(import.meta.dirname, "..", "..", "..");
const ADA = { name: "Ada", email: "ada@example.com", password: "correct horse battery" };

describe.each(testDatabases())("accounts on %s", (provider) => {
  let db: TestDb & { dispose(): Promise<void> };
  let dataDir: string;
  let quiver: Quiver;
  const logs: string[] = [];
  const start = async () => {
    const env = testServerEnv(dataDir, { QUIVER_SANDBOX: "off", DATABASE_URL: db.url });
    quiver = await startQuiver({ env, root, web: false, log: (l) => logs.push(l) });
  };
  const client = (cookie?: string) =>
    createTRPCClient<AppRouter>({
      links: [httpBatchLink({ url: `${quiver.url}/api/trpc`, headers: cookie ? { cookie } : {} })],
    });
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${quiver.url}/api/auth${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: quiver.url, ...headers },
      body: JSON.stringify(body),
    });
  const cookieOf = (res: Response) =>
    res.headers
      .getSetCookie()
      .map((c) => c.split(";")[0])
      .join("; ");
  const counts = async () => {
    const d = quiver.services.db;
    return {
      users: await d.user.count(),
      sessions: await d.session.count(),
      events: await d.sessionEvent.count(),
      policies: await d.orgPolicy.count(),
      audit: await d.auditEvent.count(),
      links: await d.shareLink.count(),
      memberships: await d.membership.count(),
    };
  };

  beforeAll(async () => {
    db = await createTestDb(provider);
    dataDir = mkdtempSync(join(tmpdir(), "quiver-accounts-"));
    await start();
  }, 60_000);
  afterAll(async () => {
    await quiver?.stop();
    await db?.dispose();
    rmSync(dataDir, { recursive: true, force: true });
  });

  let localUserId = "";
  let sessionIds: string[] = [];
  let before: Awaited<ReturnType<typeof counts>>;
  let adaCookie = "";

  it("is off by default: loopback is the local owner, no sign-in", async () => {
    const owner = client();
    expect(await owner.auth.whoami.query()).toEqual({ kind: "member", userId: expect.any(String) });
    sessionIds = [
      (await owner.sessions.create.mutate({ title: "one" })).id,
      (await owner.sessions.create.mutate({ title: "two" })).id,
    ];
    await owner.shares.create.mutate({ sessionId: sessionIds[0] });
    const d = quiver.services.db;
    const session = await d.session.findUniqueOrThrow({ where: { id: sessionIds[0] } });
    localUserId = session.ownerId;
    for (let seq = 1; seq <= 3; seq++)
      await d.sessionEvent.create({
        data: { sessionId: sessionIds[0], seq: 1000 + seq, type: "note", payload: { seq } },
      });
    await d.orgPolicy.create({ data: { orgId: session.orgId, version: 1, rules: [], createdById: localUserId } });
    await d.auditEvent.create({
      data: { orgId: session.orgId, actorId: localUserId, action: "policy.set", detail: { version: 1 } },
    });
    before = await counts();
    expect((await (await fetch(`${quiver.url}/api/auth/mode`)).json()).accounts).toBe(false);
  });

  it("the first account takes over the local owner: every session, event, policy, audit row and link is kept", async () => {
    const res = await post("/first-owner", ADA);
    expect(res.status).toBe(200);
    adaCookie = cookieOf(res);
    expect(adaCookie).toMatch(/^quiver\.session_token=/);
    expect(await counts()).toEqual(before);
    const ada = await quiver.services.db.user.findUniqueOrThrow({ where: { email: ADA.email } });
    expect(ada.id).toBe(localUserId);
    const mine = await client(adaCookie).sessions.list.query();
    expect(mine.map((s: { id: string }) => s.id).sort()).toEqual([...sessionIds].sort());
    // A second first owner is refused, and signs nobody in.
    const again = await post("/first-owner", { ...ADA, email: "eve@example.com" });
    expect(again.status).toBe(409);
    expect(again.headers.getSetCookie()).toEqual([]);
  });

  it("then loopback is nobody, the cookie is the person, across a restart", async () => {
    await expect(client().sessions.list.query()).rejects.toMatchObject({ data: { code: "UNAUTHORIZED" } });
    expect(await client().auth.whoami.query()).toMatchObject({ kind: "refused", code: "UNAUTHORIZED" });
    await quiver.stop();
    await start();
    expect(await counts()).toEqual(before); // no local owner made again
    await expect(client().sessions.list.query()).rejects.toMatchObject({ data: { code: "UNAUTHORIZED" } });
    expect((await client(adaCookie).sessions.list.query()).length).toBe(2);
    // The owner's one-time sign-in URL is not made with accounts on: a guessed one signs nobody in.
    expect(logs.some((l) => l.includes("/signin?token="))).toBe(false);
    const guessed = await fetch(`${quiver.url}/signin?token=x`, {
      headers: { "x-forwarded-for": "203.0.113.7" },
      redirect: "manual",
    });
    expect(guessed.status).toBe(401);
    expect(guessed.headers.getSetCookie()).toEqual([]);
  }, 60_000);

  it("signing a device out closes its open socket at once and refuses its cookie; other devices stay", async () => {
    const second = cookieOf(await post("/sign-in/email", { email: ADA.email, password: ADA.password }));
    const open = (cookie: string) =>
      new Promise<WebSocket>((resolve, reject) => {
        const ws = new WebSocket(`${quiver.url.replace("http", "ws")}/api/trpc`, {
          headers: { cookie, origin: quiver.url },
        });
        ws.once("open", () => resolve(ws));
        ws.once("unexpected-response", (_q, r) => reject(new Error(`upgrade refused ${r.statusCode}`)));
        ws.once("error", reject);
      });
    const first = await open(adaCookie);
    const other = await open(second);
    const closed = new Promise<{ code: number; at: number }>((resolve) =>
      first.once("close", (code) => resolve({ code, at: Date.now() })),
    );
    const devices = (await (await fetch(`${quiver.url}/api/auth/devices`, { headers: { cookie: second } })).json())
      .devices as Array<{ id: string; current: boolean }>;
    expect(devices.length).toBe(2);
    const target = devices.find((d) => !d.current)!;
    expect((await post("/devices/revoke", { id: target.id }, { cookie: second })).status).toBe(200);
    // Timed from the answer (the sockets end before it): the revoke's own database work may take
    // over a second on a loaded machine; the periodic re-check comes every 5 s.
    const answered = Date.now();
    const { code, at } = await closed;
    expect(code).toBe(SIGNED_OUT_CLOSE);
    expect(at - answered).toBeLessThan(2_000);
    expect(other.readyState).toBe(WebSocket.OPEN);
    await expect(client(adaCookie).sessions.list.query()).rejects.toMatchObject({ data: { code: "UNAUTHORIZED" } });
    expect((await client(second).sessions.list.query()).length).toBe(2);
    // Someone else's device id is not theirs to sign out.
    expect((await post("/devices/revoke", { id: target.id }, { cookie: second })).status).toBe(404);
    other.close();
  });
});
