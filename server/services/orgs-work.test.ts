// A person gone from an org leaves no agent working there: against a real server with accounts on
// (SQLite, and PostgreSQL when reachable) and a fake model provider whose responses never end, a
// member removed by the owner, and an admin who leaves, each with a turn running in a session of
// theirs: the turn stops at once (it would otherwise go on acting with rights its person lost).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { testServerEnv } from "../testing/env";
import { startQuiver, type Quiver } from "../app";
import { createTestDb, testDatabases, type TestDb } from "../testing/db";
import { callHttp, signInPeople, type People } from "../auth/authorize-testing";
import { startFakeProvider, type FakeProvider } from "../engine/fake-provider/server";

const root = join(import.meta.dirname, "..", "..");

describe.each(testDatabases())("the work of a person gone from the org on %s", (provider) => {
  let quiver: Quiver;
  let fake: FakeProvider;
  let db: TestDb & { dispose(): Promise<void> };
  let dataDir: string;
  let people: People;

  beforeAll(async () => {
    // Every response starts, then stalls until its client goes away: a turn that runs until stopped.
    fake = await startFakeProvider({
      respond: () => ({ blocks: [{ type: "text", text: "working on it ".repeat(40) }], hangAfterBytes: 300 }),
    });
    db = await createTestDb(provider);
    dataDir = mkdtempSync(join(tmpdir(), "quiver-orgs-work-"));
    const env = testServerEnv(dataDir, {
      DATABASE_URL: db.url,
      QUIVER_AUTH: "accounts",
      QUIVER_SIGNUP: "open",
      QUIVER_PROVIDER: "anthropic",
      QUIVER_MODEL: "claude-test",
      ANTHROPIC_API_KEY: "test-key",
      ANTHROPIC_BASE_URL: fake.anthropicBaseURL,
    });
    quiver = await startQuiver({ env, root, web: false, log: () => {} });
    people = await signInPeople(quiver.url, db.db);
  }, 90_000);
  afterAll(async () => {
    await quiver?.stop();
    await fake?.close();
    await db?.dispose();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  /** A session of `who`'s in the org with a turn running in it. */
  async function runningTurn(who: "member" | "admin") {
    const headers = people.headers[who];
    const made = await fetch(`${quiver.url}/api/trpc/sessions.create`, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json", origin: quiver.url },
      body: JSON.stringify({ title: `${who}'s work` }),
    });
    const sessionId = ((await made.json()) as { result: { data: { id: string } } }).result.data.id;
    expect(await callHttp(quiver.url, headers, "mutation", "turns.send", { sessionId, text: "go on" })).toEqual({
      ok: true,
    });
    await expect.poll(() => db.db.turn.count({ where: { sessionId, status: "running" } })).toBe(1);
    return sessionId;
  }
  const stillRunning = (sessionId: string) => db.db.turn.count({ where: { sessionId, status: "running" } });

  it("stops a removed member's running turn", async () => {
    const sessionId = await runningTurn("member");
    const { orgId, users } = people.fixture;
    const m = await db.db.membership.findFirstOrThrow({ where: { userId: users.member, orgId } });
    expect(await callHttp(quiver.url, people.headers.owner, "mutation", "orgs.remove", { memberId: m.id })).toEqual({
      ok: true,
    });
    await expect.poll(() => stillRunning(sessionId), { timeout: 5_000 }).toBe(0);
  });

  it("stops the running turn of an admin who leaves", async () => {
    const sessionId = await runningTurn("admin");
    const { orgId } = people.fixture;
    expect(await callHttp(quiver.url, people.headers.admin, "mutation", "orgs.leave", { orgId })).toEqual({ ok: true });
    await expect.poll(() => stillRunning(sessionId), { timeout: 5_000 }).toBe(0);
  });
});
