// The shared hub's forwarding (shared.ts) between two real instances on PostgreSQL: a forwarded
// batch whose reply is lost is sent again under the same number, and stored once.
import { afterEach, describe, expect, it } from "vitest";
import { openDb, type DbHandle } from "../db";
import { testDatabases, useTestDb } from "../testing/db";
import { createCluster, type Cluster, type ClusterRequest, type Reply } from "./cluster";
import { createSharedHub, type SharedEventHub } from "./shared";
import { seedSession } from "../testing/hub";

const hasPostgres = testDatabases().includes("postgresql");

interface Node {
  cluster: Cluster;
  hub: SharedEventHub;
  handle: DbHandle;
}

describe.skipIf(!hasPostgres)("forwarded publishes between instances", () => {
  const t = useTestDb("postgresql");
  const nodes: Node[] = [];

  afterEach(async () => {
    for (const n of nodes.splice(0)) {
      await n.hub.dispose();
      await n.cluster.dispose();
      await n.handle.close();
    }
  });

  /** An instance whose request handler can be wrapped (here: to lose a reply). */
  async function start(
    wrap: (msg: ClusterRequest, handle: () => Promise<Reply>) => Promise<Reply> = (_m, h) => h(),
  ): Promise<Node> {
    const handle = await openDb(t.current.url);
    const cluster = createCluster({ url: t.current.url, heartbeatMs: 200, ttlMs: 1_500, log: () => {} });
    const hub = createSharedHub(handle.db, cluster, {
      url: t.current.url,
      idleMs: 60_000,
      forwardTimeoutMs: 400,
      log: () => {},
    });
    await cluster.start({
      events: (m) => hub.deliver(m.events),
      request: (m) =>
        wrap(m, () => (m.type === "publish" ? hub.handlePublish(m) : Promise.resolve({ ok: false, code: "failed" }))),
      approvalAnswered: () => {},
      welcome: (to) => hub.welcome(to),
      resync: () => hub.resync(),
    });
    const node = { cluster, hub, handle };
    nodes.push(node);
    return node;
  }

  it("a batch whose reply was lost is sent again with its number and answered from memory, stored once", async () => {
    const batches: number[] = [];
    let dropped = false;
    const a = await start(async (msg, handle) => {
      if (msg.type !== "publish") return handle();
      batches.push(msg.batch);
      const reply = await handle();
      if (dropped) return reply;
      dropped = true;
      // Stored, but the answer never leaves: the sender times out and tries again.
      return new Promise<Reply>(() => {});
    });
    const b = await start();
    const { sessionId } = await seedSession(t.current.db);
    const note = (code: string, i: number) => ({
      type: "notice" as const,
      level: "info" as const,
      code,
      text: `${code}${i}`,
    });
    // A publishes first, so it holds the session's lease and B forwards to it.
    await a.hub.publish(sessionId, note("a", 0));
    const fromB = await Promise.all([0, 1, 2].map((i) => b.hub.publish(sessionId, note("b", i))));
    expect(batches.length).toBeGreaterThanOrEqual(2);
    expect(new Set(batches).size).toBe(1);
    const rows = await t.current.db.sessionEvent.findMany({ where: { sessionId }, orderBy: { seq: "asc" } });
    expect(rows.map((r) => (r.payload as { text: string }).text)).toEqual(["a0", "b0", "b1", "b2"]);
    expect(fromB.map((e) => e.seq)).toEqual(rows.slice(1).map((r) => r.seq));
    // The next batch gets a new number and is stored as usual.
    const next = await b.hub.publish(sessionId, note("b", 3));
    expect(batches.at(-1)).toBe(batches[0] + 1);
    expect(await t.current.db.sessionEvent.count({ where: { sessionId } })).toBe(5);
    expect(next.seq).toBe(rows.at(-1)!.seq + 1);
  }, 30_000);
});
