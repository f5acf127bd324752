// A person gone from an org leaves nothing working there, against a real server with accounts on
// (SQLite, and PostgreSQL when reachable) and a fake model provider whose responses never end:
// - a member removed by the owner, and an admin who leaves, each with a turn running in a session
//   of theirs: the turn stops at once (it would otherwise go on acting with rights its person lost);
// - the share links they made in the org, on their own sessions and on others', are revoked: a
//   viewer's socket open through one is closed at once and the link no longer opens, while the
//   links the others made keep working.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useAccountsServer } from "../testing/accounts";
import { testDatabases } from "../testing/db";
import { openRawTrpcSocket } from "../testing/raw-socket";
import { callHttp } from "../auth/authorize-testing";
import { LINK_ENDED_CLOSE } from "../auth/viewers";
import { SHARE_VIEW_HEADER } from "../protocol/share-view";
import { startFakeProvider, type FakeProvider } from "../engine/fake-provider/server";

describe.each(testDatabases())("the work of a person gone from the org on %s", (provider) => {
  let fake: FakeProvider;
  beforeAll(async () => {
    // Every response starts, then stalls until its client goes away: a turn that runs until stopped.
    fake = await startFakeProvider({
      respond: () => ({ blocks: [{ type: "text", text: "working on it ".repeat(40) }], hangAfterBytes: 300 }),
    });
  });
  afterAll(async () => {
    await fake?.close();
  });
  const server = useAccountsServer(provider, {
    name: "orgs-work",
    env: () => ({
      QUIVER_PROVIDER: "anthropic",
      QUIVER_MODEL: "claude-test",
      ANTHROPIC_API_KEY: "test-key",
      ANTHROPIC_BASE_URL: fake.anthropicBaseURL,
    }),
  });
  const url = () => server.quiver.url;
  const db = () => server.db.db;
  let n = 0;

  const post = async (path: string, body: unknown, headers: Record<string, string>) => {
    const res = await fetch(`${url()}${path}`, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json", origin: url() },
      body: JSON.stringify(body),
    });
    return { res, data: ((await res.json()) as { result?: { data: Record<string, unknown> } }).result?.data };
  };
  const cookiesOf = (res: Response) =>
    res.headers
      .getSetCookie()
      .map((c) => c.split(";")[0])
      .join("; ");

  /** A new person (with an org of their own) who is also `role` in the fixture's org, working in it. */
  async function newPerson(role: "member" | "admin") {
    const email = `gone-${++n}-${provider}@test.invalid`;
    const signUp = await post("/api/auth/sign-up/email", { name: `G${n}`, email, password: "orgs work password" }, {});
    expect(signUp.res.status).toBe(200);
    const user = await db().user.findUniqueOrThrow({ where: { email } });
    const { orgId } = server.people.fixture;
    const membership = await db().membership.create({ data: { userId: user.id, orgId, role } });
    await db().authSession.updateMany({ where: { userId: user.id }, data: { activeOrganizationId: orgId } });
    return { headers: { cookie: cookiesOf(signUp.res) }, userId: user.id, memberId: membership.id };
  }

  /** A share link `headers`' person makes on `sessionId` (or `made`), and a viewer's raw socket open through it. */
  async function viewerOf(headers: Record<string, string>, sessionId: string, made?: { id: string; token: string }) {
    const link = made ?? ((await post("/api/trpc/shares.create", { sessionId }, headers)).data as typeof made);
    if (!link) throw new Error("no link made");
    const cookie = cookiesOf(await fetch(`${url()}/share/${link.token}`, { redirect: "manual" }));
    const socket = await openRawTrpcSocket(url(), cookie, "/api/trpc?shared=1");
    const reads = () =>
      callHttp(url(), { cookie, [SHARE_VIEW_HEADER]: "1" }, "query", "sessions.get", { id: sessionId });
    expect(await reads()).toEqual({ ok: true });
    const opens = async () => (await fetch(`${url()}/share/${link.token}`, { redirect: "manual" })).status;
    return { link, socket, reads, opens };
  }

  /** A session of `headers`' person in the org. */
  const sessionOf = async (headers: Record<string, string>) =>
    (await post("/api/trpc/sessions.create", { title: "theirs" }, headers)).data!.id as string;

  /** A session of `who`'s in the org with a turn running in it. */
  async function runningTurn(who: "member" | "admin") {
    const headers = server.people.headers[who];
    const sessionId = await sessionOf(headers);
    expect(await callHttp(url(), headers, "mutation", "turns.send", { sessionId, text: "go on" })).toEqual({
      ok: true,
    });
    await expect.poll(() => db().turn.count({ where: { sessionId, status: "running" } })).toBe(1);
    return sessionId;
  }
  const stillRunning = (sessionId: string) => db().turn.count({ where: { sessionId, status: "running" } });

  it.each(["removed", "leaves"] as const)(
    "revokes the share links an admin who is %s made in the org, and drops their viewers",
    async (how) => {
      const gone = await newPerson("admin");
      const owner = server.people.headers.owner;
      const ownersSession = server.people.fixture.sessionId;
      // Theirs on their own session and on the owner's (the grant was theirs: it goes too), and the
      // owner's own link on the same session, which stays. Only a session's creator makes its links
      // over the API (auth/authorize.ts); the service lets an admin, as a link made before shows.
      const own = await viewerOf(gone.headers, await sessionOf(gone.headers));
      const actor = { userId: gone.userId, orgId: server.people.fixture.orgId, role: "admin" as const };
      const onOwners = await viewerOf(
        {},
        ownersSession,
        await server.quiver.services.shares.create(actor, ownersSession),
      );
      const kept = await viewerOf(owner, ownersSession);
      try {
        const done =
          how === "removed"
            ? await callHttp(url(), owner, "mutation", "orgs.remove", { memberId: gone.memberId })
            : await callHttp(url(), gone.headers, "mutation", "orgs.leave", { orgId: server.people.fixture.orgId });
        expect(done).toEqual({ ok: true });
        // Closed at once (the periodic re-check would take 5 s).
        for (const ended of [own, onOwners]) {
          await expect.poll(() => ended.socket.closeCode(), { timeout: 2_000 }).toBe(LINK_ENDED_CLOSE);
          expect(await ended.opens()).toBe(410);
          expect(await ended.reads()).toMatchObject({ ok: false });
          expect((await db().shareLink.findUniqueOrThrow({ where: { id: ended.link.id } })).revokedAt).not.toBeNull();
        }
        expect(kept.socket.closeCode()).toBeUndefined();
        expect(await kept.reads()).toEqual({ ok: true });
        expect(await kept.opens()).toBe(303);
        const audit = await db().auditEvent.findMany({
          where: { action: "share.revoked", target: `share:${own.link.id}` },
        });
        expect(audit).toEqual([expect.objectContaining({ actorId: null })]);
      } finally {
        for (const v of [own, onOwners, kept]) v.socket.destroy();
      }
    },
  );

  it("stops a removed member's running turn", async () => {
    const sessionId = await runningTurn("member");
    const { orgId, users } = server.people.fixture;
    const m = await db().membership.findFirstOrThrow({ where: { userId: users.member, orgId } });
    expect(await callHttp(url(), server.people.headers.owner, "mutation", "orgs.remove", { memberId: m.id })).toEqual({
      ok: true,
    });
    await expect.poll(() => stillRunning(sessionId), { timeout: 5_000 }).toBe(0);
  });

  it("stops the running turn of an admin who leaves", async () => {
    const sessionId = await runningTurn("admin");
    const { orgId } = server.people.fixture;
    expect(await callHttp(url(), server.people.headers.admin, "mutation", "orgs.leave", { orgId })).toEqual({
      ok: true,
    });
    await expect.poll(() => stillRunning(sessionId), { timeout: 5_000 }).toBe(0);
  });
});
