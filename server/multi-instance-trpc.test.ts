// Two Quiver servers (startQuiver, tRPC over HTTP and WebSocket) on one PostgreSQL database: a
// turn started on one is seen live, answered and cancelled from the other. The lower-level
// cluster cases (leases, recovery, LISTEN/NOTIFY) are in multi-instance.test.ts.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseEnv } from "./env";
import { testDatabases, useTestDb } from "./testing/db";
import type { SessionEvent } from "./protocol/events";
import { startFakeProvider, type FakeProvider } from "./engine/fake-provider/server";
import { startQuiver, type Quiver } from "./app";
import { trpcClients, type TrpcClient, type TrpcSocket } from "./testing/trpc";

const hasPostgres = testDatabases().includes("postgresql");

describe.skipIf(!hasPostgres)("two Quiver servers on one PostgreSQL database, over tRPC", () => {
  const t = useTestDb("postgresql");
  let fake: FakeProvider;
  const servers: {
    quiver: Quiver;
    dir: string;
    ws: TrpcSocket;
    client: TrpcClient;
  }[] = [];

  beforeAll(async () => {
    fake = await startFakeProvider();
    for (const name of ["a", "b"]) {
      const dir = mkdtempSync(join(tmpdir(), `quiver-multi-${name}-`));
      mkdirSync(join(dir, "workspace"), { recursive: true });
      const env = parseEnv({
        PORT: "0",
        DATABASE_URL: t.current.url,
        QUIVER_DATA_DIR: dir,
        QUIVER_PROVIDER: "anthropic",
        QUIVER_MODEL: "claude-test",
        ANTHROPIC_API_KEY: "test-key",
        ANTHROPIC_BASE_URL: fake.anthropicBaseURL,
      });
      const quiver = await startQuiver({ env, root: join(import.meta.dirname, ".."), web: false, log: () => {} });
      const { ws, client } = trpcClients(quiver.url);
      servers.push({ quiver, dir, ws, client });
    }
    const deadline = Date.now() + 30_000;
    while (!(await servers[0].quiver.services.health()).ok && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 200));
  }, 90_000);

  afterAll(async () => {
    for (const s of servers) {
      s.ws.close();
      await s.quiver.stop();
      rmSync(s.dir, { recursive: true, force: true });
    }
    await fake?.close();
  });

  function subscribe(
    client: (typeof servers)[number]["client"],
    sessionId: string,
    lastSeq: number,
    onEvent: (ev: SessionEvent) => void,
    until: (ev: SessionEvent) => boolean,
  ) {
    const events: SessionEvent[] = [];
    const done = new Promise<SessionEvent[]>((resolve, reject) => {
      const sub = client.turns.events.subscribe(
        { sessionId, lastSeq },
        {
          onData: (tracked) => {
            const ev = (tracked as { data: SessionEvent }).data;
            events.push(ev);
            onEvent(ev);
            if (until(ev)) {
              sub.unsubscribe();
              resolve(events);
            }
          },
          onError: reject,
        },
      );
    });
    return done;
  }

  it("a turn on A is seen live on B, answered and cancelled from B", async () => {
    const [a, b] = servers;
    fake.enqueue(
      {
        blocks: [
          { type: "text", text: "Writing it. " },
          {
            type: "tool_call",
            id: "call_sh",
            name: "shell",
            arguments: JSON.stringify({ command: "echo done > out.txt && cat out.txt" }),
          },
        ],
      },
      { blocks: [{ type: "text", text: "I wrote out.txt." }] },
    );
    const session = await a.client.sessions.create.mutate({ title: "shared" });
    const onB = subscribe(
      b.client,
      session.id,
      0,
      (ev) => {
        if (ev.type === "approval.required")
          void b.client.approvals.answer.mutate({ approvalId: ev.approvalId, choice: "once" });
      },
      (ev) => ev.type === "turn.finished",
    );
    await a.client.turns.send.mutate({ sessionId: session.id, text: "write out.txt" });
    const events = await onB;
    const seqs = events.map((e) => e.seq);
    expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(events.filter((e) => e.type === "approval.resolved")).toMatchObject([{ decision: "approved_once" }]);
    expect(events.find((e) => e.type === "tool.finished")).toMatchObject({ status: "succeeded" });
    expect(events.at(-1)).toMatchObject({ type: "turn.finished", status: "completed" });
    // The call ran on A's runner.
    expect(readFileSync(join(a.dir, "workspace", "out.txt"), "utf8")).toBe("done\n");
    expect(existsSync(join(b.dir, "workspace", "out.txt"))).toBe(false);

    // Reconnecting with a last seq, on either server, gives exactly the rest.
    const mid = seqs[Math.floor(seqs.length / 2)];
    for (const s of [a, b]) {
      const rest = await subscribe(
        s.client,
        session.id,
        mid,
        () => {},
        (ev) => ev.seq === seqs.at(-1),
      );
      expect(rest.map((e) => e.seq)).toEqual(seqs.filter((q) => q > mid));
    }

    // A turn that never ends on its own, cancelled through B.
    fake.enqueue({ blocks: [{ type: "text", text: "and on and on ".repeat(100) }], hangAfterBytes: 800 });
    let streaming!: () => void;
    const started = new Promise<void>((r) => (streaming = r));
    const second = subscribe(
      b.client,
      session.id,
      seqs.at(-1)!,
      (ev) => ev.type === "text.delta" && streaming(),
      (ev) => ev.type === "turn.finished",
    );
    await a.client.turns.send.mutate({ sessionId: session.id, text: "go on" });
    await started;
    const t0 = Date.now();
    expect(await b.client.turns.cancel.mutate({ sessionId: session.id })).toEqual({ cancelled: true });
    expect(Date.now() - t0).toBeLessThan(3_000);
    expect((await second).at(-1)).toMatchObject({ type: "turn.finished", status: "cancelled" });
    expect(a.quiver.services.engine.isRunning(session.id)).toBe(false);
  }, 90_000);
});
