// A Prisma client that runs its queries on a worker thread of its own (query-thread-worker.ts).
// Prisma 6 compiles every query in WebAssembly and interprets the plan in JavaScript: about a
// millisecond of CPU per query on these machines, during which the thread can do nothing else.
// A turn makes a dozen such queries, so 50 turns starting together held the main thread, which
// relays every token, for over half a second. Here the main thread pays a postMessage per
// query and the other core does the rest.
// The object has the model API of `Db` (`db.turn.update(…)`, lazy until awaited, batched by
// `$transaction([…])`) and the raw queries; interactive transactions and `$extends` need a
// client in this thread and are refused with an error that says so.
import type { Db } from "./index";
import type { TurnRows, TurnRowsOp } from "./turn-rows";
import { threadClient } from "./thread";

// Messages between the main thread and the query thread (one process, one code base: typed,
// not parsed).
export interface QueryCall {
  /** The model's client property (`turn`), or undefined for a raw query. */
  model?: string;
  /** `update`, `findMany`, … or `$queryRawUnsafe` / `$executeRawUnsafe`. */
  op: string;
  args: unknown[];
}
export type QueryRequest =
  | { type: "run"; id: number; calls: QueryCall[]; transaction: boolean }
  | { type: "rows"; id: number; op: TurnRowsOp; args: unknown[] }
  | { type: "close" };
export type QueryError = { name: string; message: string; code?: string; meta?: unknown };
export type QueryReply = { id: number; ok: true; results: unknown[] } | { id: number; ok: false; error: QueryError };

export interface QueryThread {
  db: Db;
  /** The turn rows, run on the same thread through the driver (turn-rows/). */
  rows: TurnRows;
  /** Waits for the queries out, then stops the thread (a later query starts it again). */
  close(): Promise<void>;
  /** Stops the thread at once, as a crash would: the queries out fail. */
  terminate(): Promise<void>;
}

const RAW = new Set(["$queryRawUnsafe", "$executeRawUnsafe"]);

/** A query as Prisma's own: nothing runs until it is awaited or given to `$transaction`. */
class ThreadQuery implements PromiseLike<unknown> {
  private running: Promise<unknown> | undefined;
  readonly [Symbol.toStringTag] = "PrismaPromise";
  constructor(
    readonly call: QueryCall,
    private readonly run: (calls: QueryCall[], transaction: boolean) => Promise<unknown[]>,
  ) {}
  private start() {
    return (this.running ??= this.run([this.call], false).then((r) => r[0]));
  }
  then<A = unknown, B = never>(
    ok?: ((v: unknown) => A | PromiseLike<A>) | null,
    fail?: ((e: unknown) => B | PromiseLike<B>) | null,
  ) {
    return this.start().then(ok, fail);
  }
  catch<B = never>(fail?: ((e: unknown) => B | PromiseLike<B>) | null) {
    return this.start().catch(fail);
  }
  finally(f?: (() => void) | null) {
    return this.start().finally(f);
  }
}

export function rebuildError(e: QueryError): Error {
  return Object.assign(new Error(e.message), { name: e.name, code: e.code, meta: e.meta });
}

export function startQueryThread(url: string): QueryThread {
  const thread = threadClient<QueryReply>(
    new URL("./query-thread-worker.ts", import.meta.url),
    { url },
    "the database query thread",
    (r) => rebuildError(r.error),
  );
  const run = (calls: QueryCall[], transaction: boolean) =>
    thread.request((id) => ({ type: "run", id, calls, transaction }) satisfies QueryRequest).then((r) => r.results);

  const models = new Map<string, object>();
  const model = (name: string) => {
    let m = models.get(name);
    if (!m) {
      m = new Proxy(
        {},
        {
          get: (_, op) =>
            typeof op === "string"
              ? (...args: unknown[]) => new ThreadQuery({ model: name, op, args }, run)
              : undefined,
        },
      );
      models.set(name, m);
    }
    return m;
  };

  const transaction = (queries: unknown) => {
    if (!Array.isArray(queries) || !queries.every((q) => q instanceof ThreadQuery)) {
      return Promise.reject(
        new Error(
          "The query thread runs $transaction([...]) over its own queries only; an interactive transaction needs a client on this thread.",
        ),
      );
    }
    return run(
      queries.map((q: ThreadQuery) => q.call),
      true,
    );
  };

  const close = () => thread.close();
  const db = new Proxy({} as Db, {
    get(_, prop) {
      if (typeof prop !== "string" || prop === "then") return undefined;
      if (prop === "$transaction") return transaction;
      if (RAW.has(prop)) return (...args: unknown[]) => new ThreadQuery({ op: prop, args }, run);
      if (prop === "$disconnect") return close;
      if (prop === "$connect") return async () => undefined;
      if (prop.startsWith("$")) throw new Error(`${prop} is not available on the query thread's client.`);
      return model(prop);
    },
  });

  // Every op named here, or the Record does not type-check: a new TurnRows op cannot be missed.
  const ops: Record<TurnRowsOp, true> = {
    begin: true,
    conversation: true,
    openRequest: true,
    closeRequest: true,
    addMessage: true,
    setMessageContent: true,
    turnUsage: true,
    end: true,
    events: true,
    images: true,
    dispatchRows: true,
    addCall: true,
    updateCall: true,
    addAudit: true,
    query: true,
    execute: true,
  };
  const call =
    (op: TurnRowsOp) =>
    (...args: unknown[]) =>
      thread.request((id) => ({ type: "rows", id, op, args }) satisfies QueryRequest).then((r) => r.results[0]);
  const rows = {
    ...Object.fromEntries(Object.keys(ops).map((op) => [op, call(op as TurnRowsOp)])),
    // The thread closes them with itself.
    close: async () => undefined,
  } as TurnRows;

  return { db, rows, close, terminate: () => thread.terminate() };
}
