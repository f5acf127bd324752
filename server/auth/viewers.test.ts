// Live viewers against real share links (SQLite, and PostgreSQL when reachable) and real
// WebSockets: a link revoked between the check a viewer's socket passed at its upgrade and the
// socket's registration (the window app.ts's createContext spans) still ends that socket at once,
// not at the next periodic re-check; a link that stays active keeps its socket; one revoked later
// drops it as before.
import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import WebSocket, { WebSocketServer } from "ws";
import { testDatabases, useTestDb } from "../testing/db";
import { seedSession } from "../testing/hub";
import { createShareService } from "../services/shares";
import type { Actor } from "../services/types";
import { createLiveViewers, LINK_ENDED_CLOSE } from "./viewers";

describe.each(testDatabases())("live viewers on %s", (provider) => {
  const t = useTestDb(provider);
  const cleanup: Array<() => unknown> = [];
  afterEach(async () => {
    for (const f of cleanup.splice(0).reverse()) await f();
  });

  /** A WebSocket server registering each viewer as app.ts does, with `between` run in the window
   *  after the link's check and before the registration. */
  async function setup(between: (linkId: string) => Promise<unknown> = async () => undefined) {
    const db = t.current.db;
    const s = await seedSession(db);
    const owner: Actor = { userId: s.userId, orgId: s.orgId, role: "owner" };
    // The periodic re-check is far off: whatever ends a socket here is not it.
    const viewers = createLiveViewers({ ended: (ids) => shares.ended(ids), recheckMs: 60_000, closeDelayMs: 50 });
    const shares = createShareService(db, { onRevoked: (id) => viewers.end(id, "revoked") });
    const link = await shares.create(owner, s.sessionId);
    const signals: AbortSignal[] = [];
    const wss = new WebSocketServer({ host: "127.0.0.1", port: 0 });
    wss.on("connection", (ws) => {
      void (async () => {
        const check = await shares.checkLink(link.id, s.sessionId);
        if (!check.ok) return ws.close(4401);
        await between(link.id);
        signals.push(await viewers.attach(link.id, ws));
      })();
    });
    await once(wss, "listening");
    cleanup.push(
      () => new Promise((r) => wss.close(r)),
      () => viewers.dispose(),
    );
    const open = async () => {
      const ws = new WebSocket(`ws://127.0.0.1:${(wss.address() as AddressInfo).port}`);
      const closed = new Promise<number>((resolve) => ws.once("close", (code) => resolve(code)));
      cleanup.push(() => ws.terminate());
      await once(ws, "open");
      await expect.poll(() => signals.length).toBe(1);
      return { ws, closed, signal: signals[0] };
    };
    return { shares, owner, link, viewers, open };
  }

  const within = <T>(p: Promise<T>, ms: number) =>
    Promise.race([p, new Promise<"still open">((r) => setTimeout(() => r("still open"), ms))]);

  it("ends a socket whose link was revoked after its check but before its registration", async () => {
    let revoke: (id: string) => Promise<unknown> = async () => undefined;
    const { shares, owner, open, viewers } = await setup((id) => revoke(id));
    revoke = (id) => shares.revoke(owner, id);
    const { closed, signal } = await open();
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBe("revoked");
    expect(await within(closed, 2_000)).toBe(LINK_ENDED_CLOSE);
    expect(viewers.size()).toBe(0);
  });

  it("keeps a socket whose link is active, and drops it when the link is revoked later", async () => {
    const { shares, owner, link, open } = await setup();
    const { ws, closed, signal } = await open();
    expect(signal.aborted).toBe(false);
    expect(await within(closed, 300)).toBe("still open");
    expect(ws.readyState).toBe(WebSocket.OPEN);
    await shares.revoke(owner, link.id);
    expect(signal.aborted).toBe(true);
    expect(await within(closed, 2_000)).toBe(LINK_ENDED_CLOSE);
  });
});
