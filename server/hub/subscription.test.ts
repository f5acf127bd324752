// The subscriber's iterator against an in-memory source: the order of database pages, the
// unwritten tail and live events; falling behind; ending by return(), abort and a failed read.
// (events.test.ts runs it against the real hub on both databases.)
import { describe, expect, it } from "vitest";
import type { SessionEvent } from "../protocol/events";
import { PAGE, Subscription, type SubscriptionSource } from "./subscription";

const ev = (seq: number): SessionEvent => ({
  type: "notice",
  level: "info",
  code: "n",
  text: String(seq),
  seq,
  sessionId: "s",
  at: "",
});
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => ev(from + i));

function source(
  stored: SessionEvent[],
  opts: { tail?: SessionEvent[]; bufferLimit?: number; failRead?: boolean } = {},
) {
  let onEvent: ((e: SessionEvent) => void) | undefined;
  let onResync: (() => void) | undefined;
  let onClose: (() => void) | undefined;
  const reads: number[] = [];
  const src: SubscriptionSource = {
    listen(e, r, c) {
      [onEvent, onResync, onClose] = [e, r, c];
      return () => (onEvent = onResync = onClose = undefined);
    },
    unwritten: () => [...(opts.tail ?? [])],
    readPage: async (after) => {
      reads.push(after);
      if (opts.failRead) throw new Error("database gone");
      return stored.filter((e) => e.seq > after).slice(0, PAGE);
    },
    bufferLimit: opts.bufferLimit ?? 100,
  };
  return {
    src,
    reads,
    emit: (e: SessionEvent) => onEvent?.(e),
    resync: () => onResync?.(),
    close: () => onClose?.(),
    listening: () => onEvent !== undefined,
  };
}

async function take(it: AsyncIterator<SessionEvent>, n: number): Promise<number[]> {
  const out: number[] = [];
  while (out.length < n) {
    const r = await it.next();
    if (r.done) break;
    out.push(r.value.seq);
  }
  return out;
}

describe("Subscription", () => {
  it("reads every database page, then the unwritten tail, then live events, each once", async () => {
    const s = source(range(1, PAGE + 20), { tail: range(PAGE + 15, PAGE + 25) });
    const sub = new Subscription(s.src, 3);
    const first = await take(sub, PAGE + 22);
    expect(first).toEqual(range(4, PAGE + 25).map((e) => e.seq));
    expect(s.reads).toEqual([3, PAGE + 3]);
    s.emit(ev(PAGE + 24)); // already seen: dropped
    s.emit(ev(PAGE + 26));
    expect(await take(sub, 1)).toEqual([PAGE + 26]);
  });

  it("waits for a live event, and goes back to the database when its buffer overflows or a resync asks", async () => {
    const stored = range(1, 2);
    const s = source(stored, { bufferLimit: 2 });
    const sub = new Subscription(s.src, 0);
    expect(await take(sub, 2)).toEqual([1, 2]);
    const waiting = sub.next();
    s.emit(ev(3));
    expect((await waiting).value?.seq).toBe(3);
    // One already handed out is not handed out again to a consumer that waits.
    const again = sub.next();
    s.emit(ev(3));
    s.emit(ev(4));
    expect((await again).value?.seq).toBe(4);
    // Four more while nobody reads: two are buffered, the rest overflow; the database has them.
    stored.push(...range(3, 8));
    for (const e of range(5, 8)) s.emit(e);
    expect(await take(sub, 4)).toEqual([5, 6, 7, 8]);
    expect(s.reads.at(-1)).toBe(4);
    stored.push(ev(9));
    s.resync();
    expect(await take(sub, 1)).toEqual([9]);
  });

  it("ends at once on return(), abort or close, and stops listening", async () => {
    for (const end of ["return", "abort", "close"] as const) {
      const s = source([]);
      const ctl = new AbortController();
      const sub = new Subscription(s.src, 0, ctl.signal);
      const pending = sub.next();
      await new Promise((r) => setTimeout(r, 5));
      if (end === "return") await sub.return();
      if (end === "abort") ctl.abort();
      if (end === "close") s.close();
      expect(await pending).toEqual({ done: true, value: undefined });
      expect(s.listening()).toBe(false);
      expect((await sub.next()).done).toBe(true);
    }
  });

  it("ends without listening when its signal was already aborted", async () => {
    const s = source(range(1, 3));
    const sub = new Subscription(s.src, 0, AbortSignal.abort());
    expect((await sub.next()).done).toBe(true);
    expect(s.listening()).toBe(false);
    expect(s.reads).toEqual([]);
  });

  it("rejects with a failed read and ends", async () => {
    const s = source([], { failRead: true });
    const sub = new Subscription(s.src, 0);
    await expect(sub.next()).rejects.toThrow("database gone");
    expect(s.listening()).toBe(false);
    expect((await sub.next()).done).toBe(true);
  });
});
