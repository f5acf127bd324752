// The query thread (query-thread.ts starts it): a Prisma client of its own on a database the
// server has already migrated, running the calls the main thread sends in order of arrival,
// each batch marked `transaction` in one transaction; raw SQL outside a batch and the turn rows
// run on the driver beside it (turn-rows/). It closes after the calls already sent.
import { parentPort, workerData } from "node:worker_threads";
import { yieldToMainThread } from "../priority";
import { databaseFault } from "./faults";
import { connectDb, type Db } from "./index";
import type { QueryCall, QueryError, QueryReply, QueryRequest } from "./query-thread";
import { turnRowsFor, type TurnRows } from "./turn-rows";

const { url } = workerData as { url: string };
const port = parentPort!;
const client = connectDb(url);
const out = new Set<Promise<void>>();
let lowered = false;
let rows: TurnRows | undefined;

const PLAIN: Record<string, "query" | "execute"> = { $queryRawUnsafe: "query", $executeRawUnsafe: "execute" };

function prepare(db: Db, call: QueryCall): Promise<unknown> {
  const target = (call.model === undefined ? db : (db as unknown as Record<string, unknown>)[call.model]) as
    Record<string, unknown> | undefined;
  const op = target?.[call.op];
  if (typeof op !== "function")
    throw new Error(`The database client has no ${call.model ? `${call.model}.` : ""}${call.op}.`);
  return (op as (...a: unknown[]) => Promise<unknown>).apply(target, call.args);
}

function describe(err: unknown): QueryError {
  // A fault of the database as a whole crosses as its clear message; the driver's text rides in meta.
  const fault = databaseFault(err, url);
  if (fault) return { name: fault.name, message: fault.message, code: fault.code, meta: { detail: fault.detail } };
  const e = err as { name?: string; message?: string; code?: unknown; meta?: unknown };
  const out: QueryError = { name: e?.name ?? "Error", message: e?.message ?? String(err) };
  if (typeof e?.code === "string") out.code = e.code;
  // Only what survives the copy to the main thread.
  if (e?.meta !== undefined) {
    try {
      out.meta = structuredClone(e.meta);
    } catch {
      /* dropped: not cloneable */
    }
  }
  return out;
}

async function run(req: Exclude<QueryRequest, { type: "close" }>): Promise<QueryReply> {
  try {
    if (req.type === "rows") {
      rows ??= turnRowsFor(url);
      return {
        id: req.id,
        ok: true,
        results: [await (rows[req.op] as (...a: unknown[]) => Promise<unknown>)(...req.args)],
      };
    }
    const [only] = req.calls;
    // Plain SQL outside a transaction runs on the driver, not through Prisma (TurnRows.query).
    if (!req.transaction && only.model === undefined && Object.hasOwn(PLAIN, only.op)) {
      rows ??= turnRowsFor(url);
      const [sql, ...args] = only.args as [string, ...unknown[]];
      return { id: req.id, ok: true, results: [await rows[PLAIN[only.op]](sql, args)] };
    }
    const db = await client;
    const results = req.transaction
      ? await db.$transaction(req.calls.map((c) => prepare(db, c)) as never)
      : [await prepare(db, req.calls[0])];
    return { id: req.id, ok: true, results: results as unknown[] };
  } catch (err) {
    return { id: req.id, ok: false, error: describe(err) };
  }
}

port.on("message", (req: QueryRequest) => {
  if (req.type === "close") {
    void Promise.allSettled(out).then(async () => {
      await (await client.catch(() => undefined))?.$disconnect();
      await rows?.close();
      port.close();
    });
    return;
  }
  // Queries start at once (PostgreSQL runs them on a pool); replies go back as each settles.
  const p = run(req).then((reply) => {
    port.postMessage(reply);
    // Lowered only once it has answered: the server's start waits for this thread's first
    // answer (Prisma loaded, connected, a query compiled), and on a busy machine a thread at
    // nice 10 took 5-7 s to get there while the main thread sat idle.
    if (!lowered) yieldToMainThread();
    lowered = true;
  });
  out.add(p);
  void p.finally(() => out.delete(p));
});
