// Prisma's better-sqlite3 adapter, made to survive a COMMIT that SQLite refuses (a full disk).
// The adapter lets one transaction run at a time through a mutex that only the transaction's
// commit() or rollback() releases. Prisma's engine closes a transaction by running "COMMIT" and
// then calling commit(); when the COMMIT throws (SQLITE_FULL), it marks the transaction
// committed anyway and never calls either, so the mutex stays held and every later
// transaction (updateMany, deleteMany, upsert, $transaction…) of this client waits forever,
// even once space is back. Here a refused COMMIT rolls back whatever SQLite left open on the
// connection and releases the mutex before the error goes on.
import { PrismaBetterSQLite3 } from "@prisma/adapter-better-sqlite3";

type Adapter = Awaited<ReturnType<PrismaBetterSQLite3["connect"]>>;
type Transaction = Awaited<ReturnType<Adapter["startTransaction"]>>;
/** The better-sqlite3 connection the adapter and its transactions share. */
type WithClient = { client?: { inTransaction?: boolean; prepare(sql: string): { run(): unknown } } };

export class SqliteAdapterFactory extends PrismaBetterSQLite3 {
  override async connect(): Promise<Adapter> {
    return guardCommits(await super.connect());
  }
}

function guardCommits(adapter: Adapter): Adapter {
  const start = adapter.startTransaction.bind(adapter);
  adapter.startTransaction = async (isolationLevel) => {
    const tx: Transaction = await start(isolationLevel);
    const executeRaw = tx.executeRaw.bind(tx);
    tx.executeRaw = async (query) => {
      try {
        return await executeRaw(query);
      } catch (err) {
        if (/^\s*COMMIT\b/i.test(query.sql)) await abandon(tx);
        throw err;
      }
    };
    return tx;
  };
  return adapter;
}

/** The engine will not close this transaction again: leave the connection clean and free. */
async function abandon(tx: Transaction): Promise<void> {
  const client = (tx as unknown as WithClient).client;
  try {
    if (client?.inTransaction) client.prepare("ROLLBACK").run();
  } catch {
    /* SQLite rolled it back itself */
  }
  await tx.rollback(); // only releases the adapter's mutex
}
