// This server instance among the others on one PostgreSQL database: the broker is PostgreSQL's
// own LISTEN/NOTIFY (no other service). It owns
// - a ServerInstance row with a heartbeat: an instance whose heartbeat is older than `ttlMs` is
//   gone (its session leases can be taken, its running turns recovered). Each heartbeat also
//   lists the gone instances whose row is still there; the live ones then call `peersGone`
//   (one at a time per instance), which claims the dead one's turns and leases with conditional
//   UPDATEs, so when several live instances notice at once each turn is recovered by one of
//   them; the gone rows are deleted afterwards. A clean stop deletes its own row after its
//   turns are closed, so only an instance that died or stalled past the lease is swept; one
//   that stalled learns after each heartbeat which of its turns were claimed (`heartbeat`);
// - one LISTEN connection on the two channels of protocol/broker.ts, reconnected with backoff
//   when it drops (PostgreSQL restart, pg_terminate_backend); after a reconnect the hub's
//   subscribers read the database again, since notifications sent meanwhile are lost;
// - one pooled connection (max 1, so requests leave in order) for NOTIFYs and the lease queries;
// - requests to one peer with a reply and a timeout (a dead peer never hangs the caller).
// A new instance says `hello` and waits for each live peer's `welcome` (sent through the peer's
// event writer, after every batch it stored without a NOTIFY): from then on the peer notifies.
// SQLite has no broker: one instance per database file.
import { randomBytes } from "node:crypto";
import type pg from "pg";
import { loadPg, openPgPool } from "../db/driver";
import {
  CONTROL_CHANNEL,
  ControlMessage,
  EVENTS_CHANNEL,
  EventsMessage,
  Reassembler,
  framePayload,
} from "../protocol/broker";
import { logFn } from "../log";

type Msg<T extends ControlMessage["type"]> = Extract<ControlMessage, { type: T }>;
export type ClusterRequest = Msg<"publish"> | Msg<"cancel">;
export type Reply = Pick<Msg<"reply">, "ok" | "value" | "code" | "message">;
type Outgoing<T> = T extends unknown ? Omit<T, "from"> : never;
type Asking<T> = T extends unknown ? Omit<T, "from" | "id"> : never;

export interface ClusterHandlers {
  events(msg: EventsMessage): void;
  /** Called in arrival order; a publish must be numbered before this returns. */
  request(msg: ClusterRequest): Promise<Reply>;
  approvalAnswered(approvalId: string): void;
  /** Sends `welcome` to a new peer through this instance's event writer. */
  welcome(to: string): Promise<void>;
  /** The LISTEN connection came back: live events may have been missed. */
  resync(): void;
  /** These instances' heartbeats are stale: recover what they left (may run on several instances at once); none: no sweeping. */
  peersGone?(ids: string[]): Promise<void>;
  /** After each heartbeat: an instance that stalled past the lease finds what its peers took over. */
  heartbeat?(): Promise<void>;
}

export interface Cluster {
  readonly id: string;
  /** Another live instance may be listening, so stored batches are NOTIFYed. */
  hasPeers(): boolean;
  start(handlers: ClusterHandlers): Promise<void>;
  send(msg: Outgoing<ControlMessage>): Promise<void>;
  request(msg: Asking<ClusterRequest>, timeoutMs: number): Promise<Reply>;
  query<T extends pg.QueryResultRow>(sql: string, params: unknown[]): Promise<T[]>;
  /** Resolves once every notification committed before now has reached this instance (or after a timeout). */
  sync(): Promise<void>;
  /** Ids of the instances whose heartbeat is fresh (this one included). */
  liveInstances(): Promise<string[]>;
  /** SQL that is true when the instance id in `column` is live. */
  liveSql(column: string): string;
  /** The LISTEN connection's backend pid (tests terminate it). */
  listenerPid(): number | undefined;
  /** Calls `fn` when another instance says people or devices changed (`people.changed`); returns the unsubscribe. */
  onPeopleChanged(fn: () => void): () => void;
  /** Looks for gone instances now, as each heartbeat does (tests call it on several at once). */
  sweep(): Promise<void>;
  dispose(): Promise<void>;
}

export interface ClusterOptions {
  url: string;
  heartbeatMs?: number;
  ttlMs?: number;
  welcomeTimeoutMs?: number;
  log?: (message: string, err?: unknown) => void;
}

const NOW = `(now() AT TIME ZONE 'UTC')`;

export function createCluster(options: ClusterOptions): Cluster {
  const id = randomBytes(8).toString("hex");
  const heartbeatMs = options.heartbeatMs ?? 2_000;
  const ttlMs = options.ttlMs ?? 10_000;
  const log = options.log ?? logFn("cluster");
  const ttl = `make_interval(secs => ${ttlMs / 1000})`;
  const pool = openPgPool(options.url, 1);
  const frames = new Map([
    [EVENTS_CHANNEL, new Reassembler()],
    [CONTROL_CHANNEL, new Reassembler()],
  ]);
  const pending = new Map<number, { to: string; resolve(r: Reply): void; timer: NodeJS.Timeout }>();
  const welcomes = new Map<string, () => void>();
  const syncs = new Map<number, () => void>();
  let handlers: ClusterHandlers | undefined;
  let listener: pg.Client | undefined;
  let pid: number | undefined;
  let peers = 0;
  let peerAt = 0;
  let nextId = 1;
  let heartbeat: NodeJS.Timeout | undefined;
  let reconnect: NodeJS.Timeout | undefined;
  let backoff = 250;
  let disposed = false;
  let sweeping: Promise<void> | undefined;
  const peopleListeners = new Set<() => void>();

  const query = async <T extends pg.QueryResultRow>(sql: string, params: unknown[]) =>
    (await pool.query<T>(sql, params)).rows;
  const send = (msg: Outgoing<ControlMessage>) =>
    query(`SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p`, [
      CONTROL_CHANNEL,
      framePayload(JSON.stringify({ ...msg, from: id }), `${id}c`),
    ]).then(() => undefined);

  async function beat(): Promise<void> {
    // Register or renew, count live peers, list gone ones, forget instances gone for a day: one statement.
    const rows = await query<{ peers: number; gone: string[] | null }>(
      `WITH me AS (INSERT INTO "ServerInstance" ("id","startedAt","seenAt") VALUES ($1, ${NOW}, ${NOW})
         ON CONFLICT ("id") DO UPDATE SET "seenAt" = EXCLUDED."seenAt" RETURNING 1),
       old AS (DELETE FROM "ServerInstance" WHERE "seenAt" < ${NOW} - interval '1 day')
       SELECT count(*) FILTER (WHERE "seenAt" > ${NOW} - ${ttl})::int AS peers,
              array_agg("id") FILTER (WHERE "seenAt" <= ${NOW} - ${ttl}) AS gone
       FROM "ServerInstance" WHERE "id" <> $1`,
      [id],
    );
    peers = rows[0]?.peers ?? 0;
    if (peers > 0) peerAt = Date.now();
    const gone = rows[0]?.gone ?? [];
    if (gone.length > 0 && handlers?.peersGone && !sweeping) void sweepGone(gone);
    await handlers?.heartbeat?.();
  }

  /** Recovers what the gone instances left, then forgets their rows (unless one came back meanwhile). */
  function sweepGone(gone: string[]): Promise<void> {
    const run = (async () => {
      // A forward waiting on a dead peer fails now rather than at its timeout.
      for (const [rid, p] of pending) {
        if (!gone.includes(p.to)) continue;
        pending.delete(rid);
        clearTimeout(p.timer);
        p.resolve({ ok: false, code: "failed", message: `instance ${p.to} did not answer: its heartbeat stopped` });
      }
      if (!handlers?.peersGone) return;
      await handlers.peersGone(gone);
      await query(`DELETE FROM "ServerInstance" WHERE "id" = ANY($1::text[]) AND "seenAt" <= ${NOW} - ${ttl}`, [gone]);
    })()
      .catch((e) =>
        log(`recovering after instance(s) ${gone.join(", ")} failed; trying again at the next heartbeat`, e),
      )
      .finally(() => {
        if (sweeping === run) sweeping = undefined;
      });
    sweeping = run;
    return run;
  }

  function onNotification(channel: string, payload: string) {
    const text = frames.get(channel)?.push(payload);
    if (text === undefined || !handlers) return;
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch {
      return log(`unreadable message on ${channel}`);
    }
    if (channel === EVENTS_CHANNEL) {
      const msg = EventsMessage.safeParse(raw);
      if (!msg.success) return log(`bad events message: ${msg.error.message}`);
      if (msg.data.from !== id) handlers.events(msg.data);
      return;
    }
    const parsed = ControlMessage.safeParse(raw);
    if (!parsed.success) return log(`bad control message: ${parsed.error.message}`);
    const msg = parsed.data;
    if (msg.type === "sync") return void (msg.from === id && syncs.get(msg.id)?.());
    if (msg.from === id || ("to" in msg && msg.to !== id)) return;
    switch (msg.type) {
      case "hello":
        peerAt = Date.now();
        void handlers.welcome(msg.from).catch((e) => log(`welcome to ${msg.from} not sent`, e));
        return;
      case "welcome": {
        const answered = welcomes.get(msg.from);
        welcomes.delete(msg.from);
        return answered?.();
      }
      case "approval.answered":
        return handlers.approvalAnswered(msg.approvalId);
      case "people.changed":
        for (const fn of peopleListeners) fn();
        return;
      case "reply": {
        const p = pending.get(msg.id);
        pending.delete(msg.id);
        clearTimeout(p?.timer);
        return p?.resolve(msg);
      }
      default: {
        const reply = (r: Reply) =>
          send({ type: "reply", to: msg.from, id: msg.id, ...r }).catch((e) => log(`reply to ${msg.from} not sent`, e));
        handlers
          .request(msg)
          .then(reply, (e: unknown) =>
            reply({ ok: false, code: "failed", message: (e as Error).message ?? String(e) }),
          );
      }
    }
  }

  async function listen(): Promise<void> {
    const client = new (loadPg().Client)({ connectionString: options.url });
    const lost = (err?: unknown) => {
      if (listener !== client) return;
      listener = undefined;
      pid = undefined;
      if (disposed) return;
      log(`the LISTEN connection dropped; reconnecting`, err);
      scheduleReconnect();
    };
    client.on("error", lost);
    client.on("end", () => lost());
    client.on("notification", (n) => onNotification(n.channel, n.payload ?? ""));
    await client.connect();
    await client.query(`LISTEN ${EVENTS_CHANNEL}; LISTEN ${CONTROL_CHANNEL}`);
    if (disposed) return void client.end().catch(() => undefined);
    listener = client;
    pid = (client as unknown as { processID?: number }).processID;
  }

  function scheduleReconnect() {
    reconnect = setTimeout(() => {
      reconnect = undefined;
      listen().then(
        () => {
          backoff = 250;
          handlers?.resync();
        },
        (err) => {
          backoff = Math.min(backoff * 2, 5_000);
          if (!disposed) {
            log(`LISTEN reconnect failed; next try in ${backoff} ms`, err);
            scheduleReconnect();
          }
        },
      );
    }, backoff);
  }

  async function greet(): Promise<void> {
    const others = (await liveInstances()).filter((i) => i !== id);
    if (others.length === 0) return;
    const answered = others.map((o) => new Promise<void>((r) => welcomes.set(o, r)));
    await send({ type: "hello" });
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(answered),
      new Promise((r) => (timer = setTimeout(r, options.welcomeTimeoutMs ?? 3_000))),
    ]);
    clearTimeout(timer);
    const silent = others.filter((o) => welcomes.has(o));
    welcomes.clear();
    if (silent.length) log(`no welcome from instance(s) ${silent.join(", ")} (stopped or stalled)`);
  }

  async function liveInstances(): Promise<string[]> {
    return (await query<{ id: string }>(`SELECT "id" FROM "ServerInstance" WHERE "seenAt" > ${NOW} - ${ttl}`, [])).map(
      (r) => r.id,
    );
  }

  return {
    id,
    // Still true for a lease time after the last peer left: its last notifications may be on the way.
    hasPeers: () => peers > 0 || Date.now() - peerAt < ttlMs,
    sync() {
      const rid = nextId++;
      return new Promise<void>((resolve) => {
        const done = () => {
          syncs.delete(rid);
          clearTimeout(timer);
          resolve();
        };
        // The LISTEN connection may be down: subscribers read the database again when it is back.
        const timer = setTimeout(done, 5_000);
        syncs.set(rid, done);
        send({ type: "sync", to: id, id: rid }).catch(done);
      });
    },
    async start(h) {
      handlers = h;
      await beat();
      await listen();
      await greet();
      // A database that refuses the heartbeat refuses every one: said once, then counted.
      let failed = 0;
      heartbeat = setInterval(
        () =>
          void beat().then(
            () => {
              if (failed > 1) log(`heartbeats succeed again after ${failed} failed`);
              failed = 0;
            },
            (e) => {
              if (failed++ === 0) log("heartbeat failed (later failures are counted until one succeeds)", e);
            },
          ),
        heartbeatMs,
      );
      heartbeat.unref();
    },
    send,
    request(msg, timeoutMs) {
      const rid = nextId++;
      return new Promise<Reply>((resolve) => {
        const timer = setTimeout(() => {
          pending.delete(rid);
          resolve({ ok: false, code: "failed", message: `instance ${msg.to} did not answer in ${timeoutMs} ms` });
        }, timeoutMs);
        pending.set(rid, { to: msg.to, resolve, timer });
        send({ ...msg, id: rid }).catch((e: unknown) => {
          pending.delete(rid);
          clearTimeout(timer);
          resolve({ ok: false, code: "failed", message: (e as Error).message });
        });
      });
    },
    query,
    liveInstances,
    liveSql: (column) =>
      `EXISTS (SELECT 1 FROM "ServerInstance" si WHERE si."id" = ${column} AND si."seenAt" > ${NOW} - ${ttl})`,
    listenerPid: () => pid,
    onPeopleChanged(fn) {
      peopleListeners.add(fn);
      return () => peopleListeners.delete(fn);
    },
    async sweep() {
      await sweeping;
      const rows = await query<{ id: string }>(
        `SELECT "id" FROM "ServerInstance" WHERE "id" <> $1 AND "seenAt" <= ${NOW} - ${ttl}`,
        [id],
      );
      if (rows.length > 0) await sweepGone(rows.map((r) => r.id));
    },
    async dispose() {
      if (disposed) return;
      disposed = true;
      clearInterval(heartbeat);
      clearTimeout(reconnect);
      await sweeping;
      for (const done of [...syncs.values()]) done();
      for (const [rid, p] of pending) {
        clearTimeout(p.timer);
        p.resolve({ ok: false, code: "failed", message: "this server is shutting down" });
        pending.delete(rid);
      }
      const l = listener;
      listener = undefined;
      await l?.end().catch(() => undefined);
      // A clean stop leaves no heartbeat behind: peers may recover this instance's turns at once.
      await query(`DELETE FROM "ServerInstance" WHERE "id" = $1`, [id]).catch((e) =>
        log("could not remove this instance's row", e),
      );
      await pool.end();
    },
  };
}
