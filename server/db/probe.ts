// A cheap write that tells whether the database takes writes now (/api/health): one row of a
// table of its own, outside the Prisma schema like _quiver_migrations, updated and committed.
// A read answers even on a full disk or a read-only database; only a committed write does not.
import type { Db, DbProvider } from "./index";

const SQL = {
  sqlite: [
    `CREATE TABLE IF NOT EXISTS _quiver_health (id INTEGER PRIMARY KEY, at TEXT NOT NULL)`,
    `INSERT INTO _quiver_health (id, at) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET at = excluded.at`,
  ],
  postgresql: [
    `CREATE TABLE IF NOT EXISTS _quiver_health (id INTEGER PRIMARY KEY, at TEXT NOT NULL)`,
    `INSERT INTO _quiver_health (id, at) VALUES (1, $1) ON CONFLICT (id) DO UPDATE SET at = excluded.at`,
  ],
} as const;

/** Resolves when a write committed; rejects with the database's error (db/faults.ts words it). */
export function writeProbe(db: Db, provider: DbProvider): () => Promise<void> {
  let created = false;
  return async () => {
    const [create, upsert] = SQL[provider];
    if (!created) {
      // Two servers creating it at once: the loser's "already exists" is as good.
      await db.$executeRawUnsafe(create).catch((err: Error) => {
        if (!/already exists|duplicate key/i.test(err.message)) throw err;
      });
      created = true;
    }
    await db.$executeRawUnsafe(upsert, new Date().toISOString());
  };
}
