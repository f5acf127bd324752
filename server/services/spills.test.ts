import { createHash } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { testDatabases, useTestDb } from "../testing/db";
import { createSpillStore, newSpillRef, selectLines, startSpillCleanup, SPILL_TTL_MS } from "./spills";
import { seedSession } from "../testing/pipeline";

describe.each(testDatabases())("spills on %s", (provider) => {
  const t = useTestDb(provider);
  const stores: { close(): Promise<void> }[] = [];
  const open = () => {
    const s = createSpillStore(t.current.db, t.current.url);
    stores.push(s);
    return s;
  };
  afterAll(async () => {
    await Promise.all(stores.map((s) => s.close()));
  });

  it("stores 10 MB on one line exactly and reads any slice", async () => {
    const { session } = await seedSession(t.current.db);
    const store = open();
    const bytes = Buffer.alloc(10 * 1024 * 1024);
    for (let i = 0; i < bytes.length; i++) bytes[i] = 97 + (i % 26);
    const saved = await store.store({ sessionId: session.id, bytes });
    expect(saved.size).toBe(bytes.length);
    expect(saved.sha256).toBe(createHash("sha256").update(bytes).digest("hex"));
    expect(Buffer.from((await store.bytes(saved.ref, session.id))!).equals(bytes)).toBe(true);
    const row = await t.current.db.spill.findUnique({
      where: { id: saved.ref },
      select: { size: true, sha256: true, createdAt: true, expiresAt: true },
    });
    expect(row).toMatchObject({ size: bytes.length, sha256: saved.sha256 });
    expect(row!.expiresAt.getTime() - row!.createdAt.getTime()).toBeGreaterThan(SPILL_TTL_MS - 60_000);
    for (const [offset, length] of [
      [0, 10],
      [5_000_000, 20_000],
      [bytes.length - 7, 100],
      [bytes.length, 10],
      [123_457, 1],
    ]) {
      const slice = await store.read(saved.ref, { sessionId: session.id, offset, length });
      expect(slice!.text).toBe(bytes.subarray(offset, Math.min(bytes.length, offset + length)).toString("latin1"));
      expect(slice!.offset).toBe(offset);
      expect(slice!.totalBytes).toBe(bytes.length);
    }
  }, 60_000);

  it("keeps NUL and invalid UTF-8 bytes exactly; slices never split a character", async () => {
    const { session } = await seedSession(t.current.db);
    const store = open();
    const bytes = Buffer.concat([
      Buffer.from("a\0b"),
      Buffer.from([0xff, 0xfe, 0xc3]),
      Buffer.from("é€𝄞\n"),
      Buffer.from([0x80, 0x00]),
    ]);
    const saved = await store.store({ sessionId: session.id, bytes });
    // Prisma reads the same bytes back (small spills only: its Bytes path is slow)
    expect(Buffer.from((await t.current.db.spill.findUnique({ where: { id: saved.ref } }))!.bytes).equals(bytes)).toBe(
      true,
    );
    expect(Buffer.from((await store.bytes(saved.ref, session.id))!).equals(bytes)).toBe(true);
    // every (offset, length) pair: the slice starts and ends on character starts and covers the request
    for (let offset = 0; offset <= bytes.length; offset++) {
      for (let length = 1; length <= bytes.length - offset + 1; length++) {
        const s = (await store.read(saved.ref, { sessionId: session.id, offset, length }))!;
        expect(s.offset).toBeLessThanOrEqual(offset);
        expect(s.end).toBeLessThanOrEqual(bytes.length);
        expect(s.text).toBe(new TextDecoder().decode(bytes.subarray(s.offset, s.end)));
        if (offset < bytes.length) expect(s.end).toBeGreaterThan(offset);
      }
    }
    const emoji = bytes.indexOf(Buffer.from("𝄞"));
    const mid = (await store.read(saved.ref, { sessionId: session.id, offset: emoji + 2, length: 1 }))!;
    expect(mid).toMatchObject({ text: "𝄞", offset: emoji, end: emoji + 4 });
  }, 120_000);

  it("confines reads to the session and expires spills", async () => {
    const a = await seedSession(t.current.db);
    const b = await seedSession(t.current.db);
    const store = open();
    const old = await store.store({
      sessionId: a.session.id,
      bytes: Buffer.from("old"),
      now: new Date(Date.now() - SPILL_TTL_MS - 1000),
    });
    const fresh = await store.store({ sessionId: a.session.id, bytes: Buffer.from("fresh") });
    expect(await store.read(fresh.ref, { sessionId: b.session.id, offset: 0, length: 10 })).toBeUndefined();
    expect(await store.read(old.ref, { sessionId: a.session.id, offset: 0, length: 10 })).toBeUndefined();
    expect(await store.read("sp_nope", { sessionId: a.session.id, offset: 0, length: 10 })).toBeUndefined();
    const cleanup = startSpillCleanup(store, { intervalMs: 60_000 });
    expect(await cleanup.ready).toBeGreaterThanOrEqual(1);
    cleanup.stop();
    expect(await t.current.db.spill.findUnique({ where: { id: old.ref } })).toBeNull();
    expect(await t.current.db.spill.findUnique({ where: { id: fresh.ref } })).not.toBeNull();
  });

  it("answers line ranges and patterns", async () => {
    const { session } = await seedSession(t.current.db);
    const store = open();
    const text = Array.from({ length: 1000 }, (_, i) => (i % 100 === 0 ? `ERROR at ${i + 1}` : `line ${i + 1}`)).join(
      "\n",
    );
    const saved = await store.store({ sessionId: session.id, bytes: Buffer.from(text) });
    const r = (await store.lines(saved.ref, { sessionId: session.id, start: 499, end: 501, maxBytes: 10_000 }))!;
    expect(r.text).toBe("499\tline 499\n500\tline 500\n501\tERROR at 501");
    expect(r.totalLines).toBe(1000);
    const m = (await store.lines(saved.ref, { sessionId: session.id, pattern: "^ERROR", maxBytes: 10_000 }))!;
    expect(m.count).toBe(10);
    expect(m.text.split("\n")[1]).toBe("101\tERROR at 101");
  });
});

describe.each(testDatabases())("streamed spills on %s", (provider) => {
  const t = useTestDb(provider);
  let store: ReturnType<typeof createSpillStore>;
  afterAll(async () => store?.close());

  it("written in odd pieces: bytes, slices, lines and patterns match the whole across chunk boundaries; expiry takes the chunks", async () => {
    store = createSpillStore(t.current.db, t.current.url);
    const { session } = await seedSession(t.current.db);
    // multi-byte characters and lines straddle the 1 MiB chunk boundaries
    const text =
      Array.from({ length: 60_000 }, (_, i) =>
        i % 7919 === 0 ? `MATCH ${i} — ✓` : `ligne ${i} é ✓ ${"x".repeat(i % 40)}`,
      ).join("\n") + "\n";
    const all = Buffer.from(text);
    const w = await store.open({ sessionId: session.id });
    expect(await store.read(w.ref, { sessionId: session.id, offset: 0, length: 10 })).toBeUndefined(); // unfinished: not readable
    for (let at = 0, step = 1; at < all.length; at += step, step = (step * 7 + 13) % 300_000 || 1)
      await w.append(all.subarray(at, at + step));
    const saved = await w.finish();
    expect(saved.size).toBe(all.length);
    expect(saved.sha256).toBe(createHash("sha256").update(all).digest("hex"));
    expect(Buffer.from((await store.bytes(saved.ref, session.id))!).equals(all)).toBe(true);
    const chunks = await t.current.db.spillChunk.count({ where: { spillId: saved.ref } });
    expect(chunks).toBe(Math.ceil(all.length / (1024 * 1024)));
    for (const offset of [0, 1024 * 1024 - 3, 1024 * 1024 * 2 + 1, all.length - 50]) {
      const slice = (await store.read(saved.ref, { sessionId: session.id, offset, length: 100 }))!;
      expect(slice.text).toBe(all.subarray(slice.offset, slice.end).toString());
      expect(Math.abs(slice.offset - offset)).toBeLessThan(4);
    }
    const lines = text.split("\n").slice(0, -1);
    const m = (await store.lines(saved.ref, { sessionId: session.id, pattern: "^MATCH", maxBytes: 10_000 }))!;
    expect(m.totalLines).toBe(lines.length);
    expect(m.count).toBe(lines.filter((l) => l.startsWith("MATCH")).length);
    const r = (await store.lines(saved.ref, { sessionId: session.id, start: 30_000, end: 30_001, maxBytes: 10_000 }))!;
    expect(r.text).toBe(`30000\t${lines[29_999]}\n30001\t${lines[30_000]}`);
    expect(await store.deleteExpired(new Date(Date.now() + SPILL_TTL_MS + 60_000))).toBeGreaterThanOrEqual(1);
    expect(await t.current.db.spillChunk.count({ where: { spillId: saved.ref } })).toBe(0);
  }, 60_000);
});

describe("spill helpers", () => {
  it("makes ids that do not collide", () => {
    const ids = new Set(Array.from({ length: 10_000 }, newSpillRef));
    expect(ids.size).toBe(10_000);
  });

  it("reports a bad pattern and caps answers by bytes", () => {
    expect(() => selectLines("a\nb", { pattern: "(", maxBytes: 100 }, 3)).toThrow(/not a valid regular expression/);
    const r = selectLines("x\n".repeat(100), { maxBytes: 20 }, 200);
    expect(r.truncated).toBe(true);
    expect(r.count).toBe(100);
    expect(Buffer.byteLength(r.text)).toBeLessThanOrEqual(20);
  });
});
