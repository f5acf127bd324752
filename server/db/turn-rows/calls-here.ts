// A tool call's rows (calls.ts) run in the thread that asks, on a connection of their own, where
// the rest of a threaded server's rows and queries go to its query thread (query-thread.ts).
// A call makes four of them in a row (the dispatch read, its row with its audit entry, running,
// settled), each waited for before the next stage: through the query thread each was a thread
// hop to a thread that runs at a lower priority (priority.ts), 0.4-2 ms on a busy 2-core
// machine, most of what the pipeline added to a call (bench pipeline). Here each is one prepared
// statement (tens of µs) on SQLite, or one round trip to PostgreSQL.
// The main thread must never stop for the database: SQLite writes wait for the write lock
// asynchronously (whenFree), and this connection never checkpoints the WAL (a checkpoint copies
// pages and syncs the file); the other connections, which commit with every turn and event,
// keep it short. A fault of the database as a whole (disk full, read-only) is thrown as its
// DatabaseFault, as from the query thread. Opened on first use and again after `close`, like the
// query thread.
import { openPgPool, openSqlite, providerOf } from "../driver";
import { withFault } from "../faults";
import type { CallRows } from "./calls";
import { postgresCallRows } from "./calls-postgres";
import { sqliteCallRows } from "./calls-sqlite";

export interface HereCallRows extends CallRows {
  close(): Promise<void>;
}

function connect(url: string): { rows: CallRows; close(): Promise<void> } {
  if (providerOf(url) === "postgresql") {
    const pool = openPgPool(url, 4);
    return { rows: postgresCallRows(pool), close: () => pool.end() };
  }
  const db = openSqlite(url, { wait: false });
  db.pragma("wal_autocheckpoint = 0");
  return { rows: sqliteCallRows(db), close: async () => void db.close() };
}

export function callRowsHere(url: string): HereCallRows {
  let open: ReturnType<typeof connect> | undefined;
  const run = async <T>(work: (rows: CallRows) => Promise<T>): Promise<T> => {
    try {
      return await work((open ??= connect(url)).rows);
    } catch (err) {
      throw withFault(err, url);
    }
  };
  return {
    dispatchRows: (sessionId, turnId, parentCallId) => run((r) => r.dispatchRows(sessionId, turnId, parentCallId)),
    addCall: (call, audit) => run((r) => r.addCall(call, audit)),
    updateCall: (id, patch) => run((r) => r.updateCall(id, patch)),
    addAudit: (toolCallId, audit) => run((r) => r.addAudit(toolCallId, audit)),
    async close() {
      const was = open;
      open = undefined;
      await was?.close();
    },
  };
}
