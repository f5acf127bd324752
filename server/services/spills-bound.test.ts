// What is kept for retrieve_tool_result is bounded (issue: a model printing 64 MiB per call used
// to add 64 MiB to the shared database per call, with no end): a session's spills hold at most
// its bound, and nothing is stored while the data folder's disk is low. Past the bound the next
// output is still cut for the model as usual, its marker says why the full output was not kept, a
// streamed spill stops growing and is deleted whole, and the spills kept before stay readable.
// The bound holds with two streams at once and with two stores (as two servers) on one database.
import { tmpdir } from "node:os";
import { afterAll, describe, expect, it } from "vitest";
import { testDatabases, useTestDb } from "../testing/db";
import { seedSession } from "../testing/pipeline";
import { cutAndSpill } from "../pipeline/finish";
import { OutputCollector, renderStreamed } from "../pipeline/stream";
import { SHELL_LIMITS } from "../pipeline/truncate";
import type { ToolContext } from "../tools/tool";
import { retrieveToolResultTool } from "../tools/builtin/retrieve_tool_result";
import { createSpillStore, SpillRefused, type SpillLimits } from "./spills";

const MiB = 1024 * 1024;
/** `n` bytes of numbered lines, so head, tail and slices are recognisable. */
const lines = (n: number, tag: string) => {
  const line = (i: number) => `${tag} ${String(i).padStart(9, "0")}\n`;
  const one = line(0).length;
  return Buffer.from(Array.from({ length: Math.ceil(n / one) }, (_, i) => line(i)).join("")).subarray(0, n);
};

describe.each(testDatabases())("spill bounds on %s", (provider) => {
  const t = useTestDb(provider);
  const stores: { close(): Promise<void> }[] = [];
  // minFreeMb 0: only the session bound is at play unless a test says otherwise.
  const open = (limits: Partial<SpillLimits>) => {
    // The store reads the limits as it writes: a test may lower the floor midway.
    const s = createSpillStore(
      t.current.db,
      t.current.url,
      Object.assign(limits, {
        sessionBytes: limits.sessionBytes ?? 3 * MiB,
        dataDir: tmpdir(),
        minFreeMb: limits.minFreeMb ?? 0,
      }),
    );
    stores.push(s);
    return s;
  };
  afterAll(async () => {
    await Promise.all(stores.map((s) => s.close()));
  });
  const held = async (sessionId: string) => {
    const spills = await t.current.db.spill.findMany({ where: { sessionId }, select: { id: true, sha256: true } });
    return spills;
  };

  it("past the session's bound the next output is not kept, the model is told why, and earlier outputs stay whole", async () => {
    const { session } = await seedSession(t.current.db);
    const store = open({ sessionBytes: 3 * MiB });
    const warnings: string[] = [];
    const log = { warn: (m: string) => warnings.push(m), error: (m: string) => warnings.push(`error: ${m}`) };
    const stream = async (bytes: Buffer, toolCallId: string) => {
      const c = new OutputCollector({
        spills: store,
        sessionId: session.id,
        toolCallId,
        limits: SHELL_LIMITS,
        log,
        ceiling: 64 * MiB,
      });
      // pieces of 64 KiB, as the runner sends them
      for (let at = 0; at < bytes.length; at += 64 * 1024) await c.push(bytes.subarray(at, at + 64 * 1024));
      return c.finish();
    };

    const a = lines(MiB, "a");
    const whole = await store.store({ sessionId: session.id, bytes: a });
    const b = lines(1.5 * MiB, "b");
    const first = await stream(b, "call-b");
    expect(first.ref).toBeDefined();

    // 2.5 MiB are held: a 2 MiB command output passes the bound midway through its stream.
    const c = lines(2 * MiB, "c");
    const over = await stream(c, "call-c");
    expect(over.ref).toBeUndefined();
    const shown = renderStreamed(over, SHELL_LIMITS);
    expect(shown.truncated).toBe(true);
    // Cut as usual: the head and the tail, some 30 KB, not 2 MiB.
    expect(Buffer.byteLength(shown.text)).toBeLessThan(32_000);
    expect(shown.text.startsWith(c.subarray(0, 1000).toString())).toBe(true);
    expect(shown.text.endsWith(c.subarray(c.length - 1000).toString())).toBe(true);
    expect(shown.text).toMatch(
      /The full output was not kept: keeping it would take this session's stored full outputs past/,
    );
    expect(shown.text).toMatch(
      /past the 3\.0 MiB they may hold together \(the server's QUIVER_OUTPUT_SESSION_BYTES; 2\.5 MiB held when it stopped\)/,
    );
    expect(shown.text).toMatch(/expire 7 days after/);
    expect(shown.text).not.toMatch(/"ref":/);
    expect(warnings.join("\n")).toMatch(/call-c dropped after .* \(session bound reached\)/);
    expect(warnings.join("\n")).not.toMatch(/^error/m);

    // The half-written spill is gone whole: only the two kept before remain, both finished.
    const rows = await held(session.id);
    expect(rows.map((r) => r.id).sort()).toEqual([whole.ref, first.ref!].sort());
    expect(rows.every((r) => r.sha256 !== "")).toBe(true);
    expect(Buffer.from((await store.bytes(whole.ref, session.id))!).equals(a)).toBe(true);
    expect(Buffer.from((await store.bytes(first.ref!, session.id))!).equals(b)).toBe(true);

    // A result that is not streamed (finish.ts) is cut and not kept either, saying so.
    const text = lines(MiB, "d").toString();
    const fin = await cutAndSpill(
      { output: text, kind: "shell" },
      { sessionId: session.id, toolCallId: "call-d", spills: store, log },
    );
    expect(fin.spillRef).toBeUndefined();
    expect(fin.truncated).toBe(true);
    expect(Buffer.byteLength(fin.content)).toBeLessThan(32_000);
    expect(fin.content).toMatch(/The full output was not kept: .*QUIVER_OUTPUT_SESSION_BYTES/);
    expect((await held(session.id)).length).toBe(2);

    // Another session has a bound of its own.
    const other = await seedSession(t.current.db);
    expect((await store.store({ sessionId: other.session.id, bytes: lines(2 * MiB, "e") })).size).toBe(2 * MiB);
  }, 60_000);

  it("a writer refused midway is deleted at once, and retrieve_tool_result for it answers that it is not stored", async () => {
    const { session } = await seedSession(t.current.db);
    const store = open({ sessionBytes: 2 * MiB });
    const kept = await store.store({ sessionId: session.id, bytes: lines(MiB, "k") });
    const w = await store.open({ sessionId: session.id });
    let refused: unknown;
    try {
      for (let i = 0; i < 4; i++) await w.append(lines(MiB, "w"));
      await w.finish();
    } catch (e) {
      refused = e;
    }
    expect(refused).toBeInstanceOf(SpillRefused);
    expect(await t.current.db.spill.findUnique({ where: { id: w.ref } })).toBeNull();
    expect(await t.current.db.spillChunk.count({ where: { spillId: w.ref } })).toBe(0);
    const ctx = { sessionId: session.id, services: { spills: store } } as unknown as ToolContext;
    const answer = await retrieveToolResultTool.execute({ ref: w.ref }, ctx).catch((e: Error) => e);
    expect(String(answer)).toMatch(/No stored output/);
    const earlier = await retrieveToolResultTool.execute({ ref: kept.ref, offset: 0, length: 30 }, ctx);
    expect(earlier.output).toMatch(/^\[bytes 0–30 of 1,048,576 in sp_/);
  }, 60_000);

  it("expired spills not yet cleaned up make room", async () => {
    const { session } = await seedSession(t.current.db);
    const store = open({ sessionBytes: 2 * MiB });
    await store.store({
      sessionId: session.id,
      bytes: lines(1.5 * MiB, "old"),
      now: new Date(Date.now() - 8 * 86_400_000),
    });
    const fresh = await store.store({ sessionId: session.id, bytes: lines(1.5 * MiB, "new") });
    expect((await held(session.id)).map((r) => r.id)).toEqual([fresh.ref]);
  }, 60_000);

  it("two streams at once and two stores on one database never pass the bound together", async () => {
    const { session } = await seedSession(t.current.db);
    // Two stores: two connections (two server instances) whose writes interleave.
    const one = open({ sessionBytes: 5 * MiB });
    const two = open({ sessionBytes: 5 * MiB });
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        (i % 2 ? one : two).store({ sessionId: session.id, bytes: lines(MiB, `p${i}`) }).then(
          (s) => s.ref,
          (e: unknown) => (e instanceof SpillRefused ? "refused" : Promise.reject(e)),
        ),
      ),
    );
    expect(results.filter((r) => r !== "refused").length).toBe(5);
    // Two streams of 3 MiB at once in one session bounded at 4 MiB, through the two stores: their
    // pieces interleave, so both see room at first; one of them stops at the bound and is deleted.
    const other = (await seedSession(t.current.db)).session.id;
    const four = [open({ sessionBytes: 4 * MiB }), open({ sessionBytes: 4 * MiB })];
    const streams = await Promise.all(
      four.map(async (s, i) => {
        try {
          const w = await s.open({ sessionId: other });
          for (let k = 0; k < 6; k++) await w.append(lines(MiB / 2, `s${i}`));
          return await w.finish();
        } catch (e) {
          if (e instanceof SpillRefused) return "refused";
          throw e;
        }
      }),
    );
    // Together they would hold 6 MiB: at least one is refused (both, when each sees the other's
    // pieces before the first refused one is deleted). Whatever is left is finished and whole.
    expect(streams).toContain("refused");
    const rows = await t.current.db.spill.findMany({ where: { sessionId: other }, select: { id: true, sha256: true } });
    expect(rows.length).toBe(streams.filter((r) => r !== "refused").length);
    for (const r of rows) expect(r.sha256).toMatch(/^[0-9a-f]{64}$/);
    const chunks = await t.current.db.spillChunk.count({ where: { spill: { sessionId: other } } });
    expect(chunks).toBe(rows.length * 3);
  }, 60_000);

  it("stores nothing while the data folder's disk is below QUIVER_MIN_FREE_DISK_MB; what was stored stays", async () => {
    const { session } = await seedSession(t.current.db);
    const limits: SpillLimits = { sessionBytes: 64 * MiB, dataDir: tmpdir(), minFreeMb: 0 };
    const store = open(limits);
    const kept = await store.store({ sessionId: session.id, bytes: lines(MiB, "k") });
    const w = await store.open({ sessionId: session.id });
    await w.append(lines(MiB, "w"));
    // The disk goes low (a floor above any free space) while the stream is being written.
    limits.minFreeMb = Number.MAX_SAFE_INTEGER;
    const midway = await w.append(lines(MiB, "w")).catch((e: Error) => e);
    expect(midway).toBeInstanceOf(SpillRefused);
    expect(String(midway)).toMatch(/The full output was not kept: the server's disk is low \(\d+ MB free, below/);
    expect(await t.current.db.spill.findUnique({ where: { id: w.ref } })).toBeNull();
    const whole = await cutAndSpill(
      { output: lines(MiB, "x").toString(), kind: "shell" },
      { sessionId: session.id, toolCallId: "call-x", spills: store, log: { warn: () => {}, error: () => {} } },
    );
    expect(whole.spillRef).toBeUndefined();
    expect(whole.content).toMatch(/disk is low .*QUIVER_MIN_FREE_DISK_MB/);
    expect(await store.open({ sessionId: session.id }).catch((e: Error) => e)).toBeInstanceOf(SpillRefused);
    expect((await held(session.id)).map((r) => r.id)).toEqual([kept.ref]);
    expect((await store.bytes(kept.ref, session.id))!.length).toBe(MiB);
  }, 60_000);
});
