// Access that ends while a connection is open, and bodies nobody may make the server hold,
// against a real server with accounts on (SQLite, and PostgreSQL when reachable):
// - a share link revoked while its viewer's WebSocket is open: the next call on that socket is
//   refused at once, not answered in the moment before the socket closes;
// - a member removed from the org, or a device signed out, with a WebSocket open: a call sent on
//   it after the server began closing it (a client that ignores the close frame) is never run;
// - a share link's holder posting to a procedure no link may call is refused before its body is
//   read, and nobody's call body over HTTP is buffered past CALL_BODY_MAX;
// - no subscription over HTTP (tRPC's event stream), whose stream nothing would end.
import { describe, expect, it } from "vitest";
import { request } from "node:http";
import { useAccountsServer } from "../testing/accounts";
import { testDatabases } from "../testing/db";
import { openRawTrpcSocket } from "../testing/raw-socket";
import { callHttp, openTrpcSocket } from "../auth/authorize-testing";
import { SHARE_VIEW_HEADER } from "../protocol/share-view";
import { CALL_BODY_MAX } from "../http/call-limits";
import { SUBSCRIPTIONS_OVER_WEBSOCKET } from "./trpc";

const PASSWORD = "closing sockets password";

describe.each(testDatabases())("closing connections on %s", (provider) => {
  const server = useAccountsServer(provider, { name: "closing" });
  let n = 0;

  const owner = () => server.people.headers.owner;
  const post = async (path: string, body: unknown, headers: Record<string, string>) => {
    const res = await fetch(`${server.quiver.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: server.quiver.url, ...headers },
      body: JSON.stringify(body),
    });
    return { res, json: (await res.json()) as { result?: { data: Record<string, unknown> } } };
  };

  /** A new member of the owner's org working in it, with a session of their own. */
  async function newMember() {
    const email = `closing-${++n}-${provider}@test.invalid`;
    const { res } = await post("/api/auth/sign-up/email", { name: `M${n}`, email, password: PASSWORD }, {});
    expect(res.status).toBe(200);
    const cookie = res.headers
      .getSetCookie()
      .map((c) => c.split(";")[0])
      .join("; ");
    const user = await server.db.db.user.findUniqueOrThrow({ where: { email } });
    const { orgId } = server.people.fixture;
    const membership = await server.db.db.membership.create({ data: { userId: user.id, orgId, role: "member" } });
    await server.db.db.authSession.updateMany({ where: { userId: user.id }, data: { activeOrganizationId: orgId } });
    const made = await post("/api/trpc/sessions.create", { title: "mine" }, { cookie });
    const sessionId = made.json.result!.data.id as string;
    const authSessionId = (await server.db.db.authSession.findFirstOrThrow({ where: { userId: user.id } })).id;
    return { cookie, userId: user.id, memberId: membership.id, sessionId, authSessionId };
  }

  const titleOf = async (id: string) => (await server.db.db.session.findUniqueOrThrow({ where: { id } })).title;
  const renameCall = (id: string, title: string) =>
    JSON.stringify({ id: 1, method: "mutation", params: { path: "sessions.rename", input: { id, title } } });

  it("refuses a revoked link's next call on its still-open socket", async () => {
    const { sessionId } = server.people.fixture;
    const made = await post("/api/trpc/shares.create", { sessionId }, owner());
    const link = made.json.result!.data as { id: string; token: string };
    const viewerCookie = (await fetch(`${server.quiver.url}/share/${link.token}`, { redirect: "manual" })).headers
      .getSetCookie()
      .map((c) => c.split(";")[0])
      .join("; ");
    const socket = await openTrpcSocket(
      server.quiver.url,
      { cookie: viewerCookie, [SHARE_VIEW_HEADER]: "1" },
      "?shared=1",
    );
    try {
      expect(socket.refused).toBeNull();
      expect(await socket.call("query", "sessions.get", { id: sessionId })).toEqual({ ok: true });
      expect((await callHttp(server.quiver.url, owner(), "mutation", "shares.revoke", { linkId: link.id })).ok).toBe(
        true,
      );
      // The socket closes a moment later; the call sent now is already refused, as each after it.
      for (const path of ["sessions.get", "files.tree", "turns.window"]) {
        const answer = await socket.call("query", path, { sessionId, id: sessionId, turns: 5 });
        expect(answer, path).toMatchObject({ ok: false, code: "FORBIDDEN" });
      }
    } finally {
      socket.close();
    }
  });

  it.each(["removed from the org", "signed out"] as const)(
    "runs no call sent on a socket after its person was %s",
    async (how) => {
      const m = await newMember();
      const raw = await openRawTrpcSocket(server.quiver.url, m.cookie);
      try {
        // The socket works: a rename sent on it is run (as one of a batch: tRPC takes several
        // calls in one message).
        raw.send(`[${renameCall(m.sessionId, "before")}]`);
        await expect.poll(() => titleOf(m.sessionId)).toBe("before");
        if (how === "signed out") await server.quiver.accounts.revokeDevice(m.userId, m.authSessionId);
        else
          expect(
            (await callHttp(server.quiver.url, owner(), "mutation", "orgs.remove", { memberId: m.memberId })).ok,
          ).toBe(true);
        // The server has sent its close frame; this client ignores it and goes on sending.
        raw.send(renameCall(m.sessionId, "after"));
        raw.send(renameCall(m.sessionId, "after, again"));
        raw.send(`[${renameCall(m.sessionId, "after, batched")}]`);
        await new Promise((r) => setTimeout(r, 600));
        expect(await titleOf(m.sessionId)).toBe("before");
        expect(raw.closeCode()).toBe(4401);
      } finally {
        raw.destroy();
      }
    },
  );

  /** POSTs `bytes` of body (sent as they drain; `stopAt`: only so many, the rest never comes). */
  function postBody(path: string, headers: Record<string, string>, bytes: number, stopAt = bytes, chunked = false) {
    const u = new URL(server.quiver.url);
    return new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(
        {
          host: u.hostname,
          port: u.port,
          path,
          method: "POST",
          headers: {
            ...headers,
            origin: server.quiver.url,
            "content-type": "application/json",
            ...(chunked ? { "transfer-encoding": "chunked" } : { "content-length": bytes }),
          },
        },
        (res) => {
          let body = "";
          res.on("data", (c: Buffer) => (body += c.toString()));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
          res.on("error", reject);
        },
      );
      req.on("error", () => undefined);
      const chunk = Buffer.alloc(1024 * 1024, 0x20);
      let sent = 0;
      const write = () => {
        while (sent < stopAt) {
          const part = chunk.subarray(0, Math.min(chunk.length, stopAt - sent));
          sent += part.length;
          if (!req.write(part)) return void req.once("drain", write);
        }
        if (stopAt === bytes) req.end();
      };
      write();
    });
  }

  it("serves no subscription over HTTP, where nothing would end it when access ends", async () => {
    const m = await newMember();
    const { sessionId } = server.people.fixture;
    const made = await post("/api/trpc/shares.create", { sessionId }, owner());
    const link = made.json.result!.data as { token: string };
    const viewerCookie = (await fetch(`${server.quiver.url}/share/${link.token}`, { redirect: "manual" })).headers
      .getSetCookie()
      .map((c) => c.split(";")[0])
      .join("; ");
    const callers: Array<[string, Record<string, string>, string]> = [
      ["the org's owner", owner(), sessionId],
      ["a member, on their own session", { cookie: m.cookie }, m.sessionId],
      ["a share link's viewer", { cookie: viewerCookie, [SHARE_VIEW_HEADER]: "1" }, sessionId],
    ];
    for (const [who, headers, id] of callers) {
      // tRPC's event-stream transport: a GET asking for text/event-stream.
      const input = encodeURIComponent(JSON.stringify({ sessionId: id, lastSeq: 0 }));
      const res = await fetch(`${server.quiver.url}/api/trpc/turns.events?input=${input}`, {
        headers: { accept: "text/event-stream", ...headers },
        signal: AbortSignal.timeout(10_000),
      });
      // The answer ends by itself (a stream would not) and carries the refusal, no event.
      const body = await res.text();
      expect(body, who).toContain(SUBSCRIPTIONS_OVER_WEBSOCKET);
      expect(body, who).not.toContain('"seq"');
    }
  });

  it("refuses a link's holder calling what no link may call before reading its body", { timeout: 15_000 }, async () => {
    // 1 MB of a 200 MB body is sent and the rest never comes: the answer must not wait for it.
    const answer = await postBody(
      "/api/trpc/turns.send",
      { ...server.people.headers.viewer },
      200 * 1024 * 1024,
      1024 * 1024,
    );
    expect(answer.status).toBe(403);
    expect(answer.body).toContain("read-only share link");
    // A read it may make, posted (a query is a GET): refused without waiting for the body too.
    const posted = await postBody(
      "/api/trpc/sessions.get",
      { ...server.people.headers.viewer },
      200 * 1024 * 1024,
      1024 * 1024,
    );
    expect(posted.status).toBe(405);
  });

  it("refuses a call body past CALL_BODY_MAX instead of buffering it", async () => {
    const answer = await postBody("/api/trpc/sessions.rename", owner(), CALL_BODY_MAX + 1024 * 1024);
    expect(answer.status).toBe(413);
    // Without a length (chunked), counted as it arrives.
    const chunked = await postBody("/api/trpc/sessions.rename", owner(), CALL_BODY_MAX + 1024 * 1024, undefined, true);
    expect(chunked.status).toBe(413);
    // Under the bound, the body is read and judged as before.
    const small = await postBody("/api/trpc/sessions.rename", owner(), 1024 * 1024);
    expect(small.status).toBe(400);
  });
});
