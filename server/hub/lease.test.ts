// Sequence numbers leased ahead (events.ts): the next block is asked for when half of the
// current one is left, so a turn that streams faster than a lease's round trip is numbered
// and fanned out without waiting for it (an event that waits for a lease is held whole, and a
// fast turn used to keep most of its tokens waiting so). When events did wait, the next lease
// is larger. A block another writer's lease split off from the current one is used after it.
import { describe, expect, it } from "vitest";
import { testDatabases, useTestDb } from "../testing/db";
import { seedSession } from "../testing/hub";
import { createEventHub } from "./events";

const notice = (i: number) => ({ type: "notice" as const, level: "info" as const, code: "n", text: String(i) });
const tick = () => new Promise((r) => setTimeout(r, 10));

/** A reserve whose answers the test gives one at a time; `skip` numbers go to another writer first. */
function gatedReserve() {
  let top = 0;
  const asked: number[] = [];
  const answers: ((skip?: number) => void)[] = [];
  return {
    asked,
    answer: (i: number, skip = 0) => answers[i](skip),
    reserve: (_sessionId: string, count: number) =>
      new Promise<number>((resolve) => {
        asked.push(count);
        answers.push((skip = 0) => resolve((top += skip + count)));
      }),
  };
}

describe.each(testDatabases())("leasing sequence numbers ahead on %s", (provider) => {
  const t = useTestDb(provider);

  it("asks for the next block at half of this one, numbers on while it is asked for, and asks for more after events waited", async () => {
    const gate = gatedReserve();
    const hub = createEventHub(t.current.db, { url: t.current.url, lease: 100, reserve: gate.reserve });
    const { sessionId } = await seedSession(t.current.db);
    const post = (n: number) => {
      for (let i = 0; i < n; i++) hub.post(sessionId, notice(i), () => undefined);
    };
    post(1);
    gate.answer(0);
    await tick();
    post(48);
    expect(gate.asked).toEqual([100]);
    // The 50th number leaves 50 of the block: the next is asked for now, not at the 101st.
    post(1);
    expect(gate.asked).toEqual([100, 100]);
    // Numbered and handed on while that lease is out; written() does not wait for it.
    post(50);
    expect(await hub.lastSeq(sessionId)).toBe(100);
    await hub.written(sessionId);
    // Past the block, events wait for the lease; they waited, so the next lease is twice the size.
    post(10);
    expect(await hub.lastSeq(sessionId)).toBe(100);
    gate.answer(1);
    await tick();
    expect(await hub.lastSeq(sessionId)).toBe(110);
    expect(gate.asked).toEqual([100, 100, 200]);
    gate.answer(2);
    await hub.written(sessionId);
    const rows = await t.current.db.sessionEvent.findMany({ where: { sessionId }, orderBy: { seq: "asc" } });
    expect(rows.map((r) => r.seq)).toEqual(Array.from({ length: 110 }, (_, i) => i + 1));
    await hub.dispose();
  });

  it("uses a block leased ahead that another writer split off only once the current one is used up", async () => {
    const gate = gatedReserve();
    const hub = createEventHub(t.current.db, { url: t.current.url, lease: 100, reserve: gate.reserve });
    const { sessionId } = await seedSession(t.current.db);
    const seqs: number[] = [];
    const ctl = new AbortController();
    const watching = (async () => {
      for await (const ev of hub.subscribe(sessionId, 0, ctl.signal)) if (seqs.push(ev.seq) === 110) break;
    })();
    await tick();
    const post = (n: number) => {
      for (let i = 0; i < n; i++) hub.post(sessionId, notice(i), () => undefined);
    };
    post(1);
    gate.answer(0);
    await tick();
    post(49);
    // Another writer reserves 30 numbers before this lease: 131-230 follow 1-100, not 101.
    gate.answer(1, 30);
    await tick();
    post(60);
    await watching;
    ctl.abort();
    expect(seqs).toEqual([
      ...Array.from({ length: 100 }, (_, i) => i + 1),
      ...Array.from({ length: 10 }, (_, i) => 131 + i),
    ]);
    expect(await hub.lastSeq(sessionId)).toBe(140);
    await hub.dispose();
  });
});
