// The event hub when several server instances share one PostgreSQL database (cluster.ts).
//
// Order: a subscriber drops any event whose seq is not above the last it saw, so a session's
// events must be numbered and published by one instance at a time. Numbers come in blocks from
// Session.lastSeq; two instances publishing at once would interleave their blocks. So each
// session has one publisher: Session.publisherId, an ownership lease that lasts while that
// instance's heartbeat is fresh (renewed by the heartbeat, taken over when it expires). An
// instance takes a free (or expired) lease on its first publish, and releases it after
// `idleMs` without publishing of its own, once everything it numbered is stored, giving back
// unused numbers; so the lease follows the instance running the session's turn. Any other
// instance forwards its publishes for the session to the publisher over NOTIFY, in order, one
// batch in flight per session; the publisher numbers them with its own and replies with their
// numbers once stored. A publisher that is releasing answers `not_owner` and the sender takes
// the lease itself once it is free. Since a new publisher starts after the old one's last event
// was committed, above its last number, and notifications arrive in commit order, every
// instance sees each session's events in seq order (a new publisher first waits for its own
// marker NOTIFY to come back, so the previous publisher's notifications reach it before its own
// events reach its local subscribers).
// Why not a sequence per event in the database: a round trip per token on the thread that relays
// them. Why not per-instance numbering merged by subscribers: resuming by one seq needs one order.
// Events reach other instances from the event writer's transaction (event-rows.ts), only while
// a peer is listening (cluster.hasPeers). Limits: an instance that stalls longer than the
// heartbeat lease may find its lease taken while it still holds numbers (its late events then
// land below the new publisher's, and live subscribers skip them; they stay in the database).
// A forward whose reply is lost (or late) is sent again whole, with the same batch number: the
// publisher remembers each batch's answer for a while and answers a repeat with it, so the
// events are stored once. Only a publisher that died after storing a batch whose reply was lost
// cannot answer the repeat; the new publisher then stores that batch a second time.
// When the cluster finds an instance gone (cluster.ts) its leases are freed (freeLeasesOf).
import type { Db } from "../db";
import type { SessionEvent, SessionEventBody } from "../protocol/events";
import { CONTROL_CHANNEL, framePayload, type ControlMessage } from "../protocol/broker";
import type { Cluster, Reply } from "./cluster";
import { createEventHub, type EventHub, type EventHubOptions } from "./events";
import { workerEventStore } from "./event-store";
import { logFn } from "../log";

export interface SharedHubOptions extends Omit<EventHubOptions, "store" | "reserve"> {
  url: string;
  /** A publisher lets go of a session after this long without publishing its own events (default 2 s). */
  idleMs?: number;
  /** How long a forwarded publish waits for the publisher's reply (default 10 s). */
  forwardTimeoutMs?: number;
}

export interface SharedEventHub extends EventHub {
  /** A peer forwarded events of a session this instance may publish. */
  handlePublish(msg: Extract<ControlMessage, { type: "publish" }>): Promise<Reply>;
  deliver(events: SessionEvent[]): void;
  resync(): void;
  /** Answers a new peer's hello through the event writer (after every batch stored so far). */
  welcome(to: string): Promise<void>;
  /** Frees the sessions these gone instances publish; returns how many. */
  freeLeasesOf(instances: string[]): Promise<number>;
}

interface Item {
  body: SessionEventBody;
  resolve(ev: SessionEvent): void;
  reject(err: unknown): void;
}

interface Shared {
  mode: "none" | "local" | "remote" | "releasing";
  owner?: string;
  queue: Item[];
  /** A forwarded batch that got no answer: sent again first, whole, under the same number. */
  unanswered?: { batch: number; items: Item[] };
  pumping: boolean;
  lastUse: number;
  releasing?: Promise<void>;
  /** The last event that queued here (not handed to `inner` at once): written() waits for it,
   *  since it is handed on, and stored, after every earlier one. */
  queuedTail?: Promise<unknown>;
  /** post()'s `refused` as handed to `inner`, kept while the caller passes the same one: the
   *  write-behind joins a turn's deltas only while they share it (hub/delta-run.ts). */
  posted?: { refused: (err: unknown, ev?: SessionEvent) => void; inner: (err: unknown, ev?: SessionEvent) => void };
}

const NOW = `(now() AT TIME ZONE 'UTC')`;
const FORWARD_BATCH = 200;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function createSharedHub(db: Db, cluster: Cluster, options: SharedHubOptions): SharedEventHub {
  const me = cluster.id;
  const idleMs = options.idleMs ?? 2_000;
  const forwardTimeoutMs = options.forwardTimeoutMs ?? 10_000;
  const log = options.log ?? logFn("hub");
  const store = workerEventStore(options.url, { notifyFrom: () => (cluster.hasPeers() ? me : undefined) });
  const inner = createEventHub(db, {
    ...options,
    store,
    async reserve(sessionId, count) {
      const rows = await cluster.query<{ lastSeq: number }>(
        `UPDATE "Session" SET "lastSeq" = "lastSeq" + $2, "updatedAt" = ${NOW} WHERE "id" = $1 AND "publisherId" = $3 RETURNING "lastSeq"`,
        [sessionId, count, me],
      );
      if (rows.length === 0)
        throw new Error(
          `Session ${sessionId}'s events are no longer published by this server instance (or it was deleted).`,
        );
      return rows[0].lastSeq;
    },
  });
  const sessions = new Map<string, Shared>();
  // Forwarded batches this instance stored (or is storing), by sender and batch number.
  const answered = new Map<string, { at: number; reply: Promise<Reply> }>();
  const rememberMs = Math.max(60_000, forwardTimeoutMs * 6);
  let nextBatch = 1;
  let disposed = false;
  // Start the writer thread now: a new peer's welcome goes through it and should not wait for its boot.
  void store.notify?.(CONTROL_CHANNEL, []).catch(() => undefined);

  const stateOf = (sessionId: string) => {
    let st = sessions.get(sessionId);
    if (!st) sessions.set(sessionId, (st = { mode: "none", queue: [], pumping: false, lastUse: 0 }));
    return st;
  };

  /** Takes the lease if it is free, ours or expired; otherwise says who holds it. */
  async function acquire(sessionId: string): Promise<{ exists: boolean; owner: string | null }> {
    const rows = await cluster.query<{ taken: string | null; current: string | null }>(
      `WITH taken AS (UPDATE "Session" SET "publisherId" = $2 WHERE "id" = $1
         AND ("publisherId" IS NULL OR "publisherId" = $2 OR NOT ${cluster.liveSql(`"Session"."publisherId"`)}) RETURNING "publisherId")
       SELECT (SELECT "publisherId" FROM taken) AS taken, s."publisherId" AS current FROM "Session" s WHERE s."id" = $1`,
      [sessionId, me],
    );
    if (rows.length === 0) return { exists: false, owner: null };
    return { exists: true, owner: rows[0].taken ?? rows[0].current };
  }

  function publishLocally(sessionId: string, st: Shared, item: Item) {
    inner.publish(sessionId, item.body).then(item.resolve, (err: unknown) => {
      item.reject(err);
      // The lease was taken over while this instance was stalled: start again from the database.
      if (st.mode === "local" && /no longer published/.test((err as Error).message)) st.mode = "none";
    });
  }

  async function pump(sessionId: string, st: Shared): Promise<void> {
    if (st.pumping) return;
    st.pumping = true;
    try {
      while (st.queue.length > 0 || st.unanswered) {
        if (disposed) {
          for (const i of [...(st.unanswered?.items ?? []), ...st.queue.splice(0)])
            i.reject(new Error("The event hub is shut down."));
          st.unanswered = undefined;
          break;
        }
        if (st.mode === "releasing") {
          await st.releasing;
          continue;
        }
        if (st.mode === "none") {
          const { exists, owner } = await acquire(sessionId);
          if (!exists) {
            const error = new Error(`No session ${sessionId}: its events cannot be recorded.`);
            for (const i of [...(st.unanswered?.items ?? []), ...st.queue.splice(0)]) i.reject(error);
            st.unanswered = undefined;
            break;
          }
          if (owner === null) continue; // released between the two reads
          // The previous publisher's last events were committed before we got the lease, but
          // their notifications may still be on the way here: let them arrive before ours.
          if (owner === me && cluster.hasPeers()) await cluster.sync();
          st.mode = owner === me ? "local" : "remote";
          st.owner = owner;
        }
        if (st.mode === "local") {
          st.lastUse = Date.now();
          const retried = st.unanswered?.items ?? [];
          st.unanswered = undefined;
          for (const item of [...retried, ...st.queue.splice(0)]) publishLocally(sessionId, st, item);
          continue;
        }
        const sending = st.unanswered ?? { batch: nextBatch++, items: st.queue.splice(0, FORWARD_BATCH) };
        st.unanswered = undefined;
        const batch = sending.items;
        const reply = await cluster.request(
          { type: "publish", to: st.owner!, sessionId, batch: sending.batch, bodies: batch.map((b) => b.body) },
          forwardTimeoutMs,
        );
        const placed = Array.isArray(reply.value) ? reply.value : [];
        if (reply.ok && placed.length === batch.length) {
          batch.forEach((b, i) =>
            b.resolve({ ...b.body, sessionId, seq: placed[i].seq, at: placed[i].at } as SessionEvent),
          );
        } else if (reply.code === "not_owner" || /did not answer/.test(reply.message ?? "")) {
          // The publisher let go (or is gone, or its answer was lost): look again, this batch
          // first and unchanged, so a publisher that stored it answers the repeat from memory.
          st.unanswered = sending;
          st.mode = "none";
          await sleep(20);
        } else {
          const error = new Error(
            `Events of session ${sessionId} were not stored by instance ${st.owner}: ${reply.message ?? "no reason"}`,
          );
          for (const b of batch) b.reject(error);
        }
      }
    } catch (err) {
      log(`publishing for ${sessionId} failed`, err);
      for (const i of [...(st.unanswered?.items ?? []), ...st.queue.splice(0)]) i.reject(err);
      st.unanswered = undefined;
      st.mode = "none";
    } finally {
      st.pumping = false;
    }
  }

  function release(sessionId: string, st: Shared): void {
    st.mode = "releasing";
    st.releasing = (async () => {
      const unused = await inner.release(sessionId);
      await cluster.query(
        `UPDATE "Session" SET "publisherId" = NULL, "lastSeq" = CASE WHEN "lastSeq" = $3 THEN $4 ELSE "lastSeq" END WHERE "id" = $1 AND "publisherId" = $2`,
        [sessionId, me, unused.max, unused.next - 1],
      );
    })().then(
      () => {
        st.mode = "none";
        if (st.queue.length) void pump(sessionId, st);
        else if (!st.pumping) sessions.delete(sessionId);
      },
      (err) => {
        // Still the publisher as far as the database says: keep publishing, try again later.
        log(`could not release session ${sessionId}`, err);
        st.mode = "local";
        st.lastUse = Date.now();
        if (st.queue.length) void pump(sessionId, st);
      },
    );
  }

  const sweep = setInterval(
    () => {
      const now = Date.now();
      for (const [key, a] of answered) if (now - a.at > rememberMs) answered.delete(key);
      for (const [sessionId, st] of sessions) {
        // Alone on the database, keep the lease: letting go would cost a round trip on the next turn.
        if (st.mode === "local" && st.queue.length === 0 && now - st.lastUse >= idleMs && cluster.hasPeers())
          release(sessionId, st);
        else if (st.mode !== "local" && st.mode !== "releasing" && st.queue.length === 0 && !st.pumping)
          sessions.delete(sessionId);
      }
    },
    Math.max(50, idleMs / 2),
  );
  sweep.unref();

  return {
    publish(sessionId, body) {
      if (disposed) return Promise.reject(new Error("The event hub is shut down."));
      const st = stateOf(sessionId);
      let queued = false;
      const published = new Promise<SessionEvent>((resolve, reject) => {
        const item = { body, resolve, reject };
        if (st.mode === "local" && st.queue.length === 0) {
          st.lastUse = Date.now();
          publishLocally(sessionId, st, item);
          return;
        }
        queued = true;
        st.queue.push(item);
        void pump(sessionId, st);
      });
      if (queued) st.queuedTail = published.catch(() => undefined);
      return published;
    },
    post(sessionId, body, refused) {
      const st = disposed ? undefined : sessions.get(sessionId);
      if (st?.mode === "local" && st.queue.length === 0) {
        st.lastUse = Date.now();
        // As publishLocally, without a promise: a streamed token's way.
        if (st.posted?.refused !== refused) {
          const inRefused = (err: unknown, ev?: SessionEvent) => {
            refused(err, ev);
            if (st.mode === "local" && /no longer published/.test((err as Error).message)) st.mode = "none";
          };
          st.posted = { refused, inner: inRefused };
        }
        inner.post(sessionId, body, st.posted.inner);
        return;
      }
      this.publish(sessionId, body).then(undefined, (err: unknown) => refused(err));
    },
    async written(sessionId) {
      const st = sessions.get(sessionId);
      const tail = st?.queue.length || st?.unanswered || st?.pumping ? st.queuedTail : undefined;
      await Promise.all([tail, inner.written(sessionId)]);
    },
    subscribe: (sessionId, afterSeq, signal, options) => inner.subscribe(sessionId, afterSeq, signal, options),
    lastSeq: (sessionId) => inner.lastSeq(sessionId),
    holds: (sessionId, seq) => inner.holds(sessionId, seq),
    handlePublish(msg) {
      // A repeat (its sender got no answer in time): the first answer, even after letting go.
      const key = `${msg.from}:${msg.batch}`;
      const seen = answered.get(key);
      if (seen) return seen.reply;
      const st = sessions.get(msg.sessionId);
      if (disposed || !st || st.mode !== "local" || st.queue.length > 0)
        return Promise.resolve({ ok: false, code: "not_owner" });
      // Numbered now, in arrival order, among this instance's own events.
      const reply = Promise.all(msg.bodies.map((b) => inner.publish(msg.sessionId, b))).then((events): Reply => ({
        ok: true,
        value: events.map((e) => ({ seq: e.seq, at: e.at })),
      }));
      answered.set(key, { at: Date.now(), reply });
      // Not stored: a repeat may try again.
      reply.catch(() => answered.delete(key));
      return reply;
    },
    async freeLeasesOf(instances) {
      const rows = await cluster.query(
        `UPDATE "Session" SET "publisherId" = NULL WHERE "publisherId" = ANY($1::text[]) AND NOT ${cluster.liveSql(`"Session"."publisherId"`)} RETURNING "id"`,
        [instances],
      );
      return rows.length;
    },
    deliver(events) {
      for (const ev of events) inner.deliver(ev);
    },
    resync: () => inner.resync(),
    welcome: (to) =>
      store.notify!(CONTROL_CHANNEL, framePayload(JSON.stringify({ type: "welcome", from: me, to }), `${me}w`)),
    async dispose() {
      disposed = true;
      clearInterval(sweep);
      for (const st of sessions.values())
        for (const i of st.queue.splice(0)) i.reject(new Error("The event hub is shut down."));
      await Promise.allSettled([...sessions.values()].map((st) => st.releasing));
      await inner.dispose();
      await cluster
        .query(`UPDATE "Session" SET "publisherId" = NULL WHERE "publisherId" = $1`, [me])
        .catch((err) => log("could not release this instance's sessions", err));
    },
  };
}
