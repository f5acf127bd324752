// Runner ids bound to runners' keys, trusted on first use: the first runner of the shared
// QUIVER_RUNNER_TOKEN to say an id binds it to its public key in the database, and a later hello
// of that id (or of one that looks like it) must prove the same key. The pool is given this as a
// hook (parts.ts), as executors get everything from the database. The row's primary key is the
// folded id (bound-tokens.ts), so of two first hellos on any number of servers sharing the
// database exactly one is inserted; the other reads the winner's key and is refused. Look-alike
// ids of two keys are not one key ("gpu-о" with a Cyrillic о looks like "gpu-o" and "gpu-ö",
// which do not look like each other), so the database decides those too: a binding is inserted
// only by a statement that finds no look-alike of another key, and such statements run one at a
// time (SQLite's write lock; on PostgreSQL a transaction's advisory lock). A server killed -9 at
// any moment leaves a binding that was checked, or none.
import type { Db, DbProvider } from "../../db";
import { sqliteDate } from "../../db/driver";
import { foldedId, looksAlike } from "./bound-tokens";
import type { IdentityRefusal } from "./identity";

export type KeyClaim = { ok: true; first: boolean } | ({ ok: false } & IdentityRefusal);

/** What the pool asks of the bindings (RunnerPoolOptions.keys). */
export interface RunnerKeyStore {
  /** Binds `runnerId` to `publicKey` if nothing holds it yet; refuses another key's id. */
  claim(runnerId: string, publicKey: string): Promise<KeyClaim>;
}

export interface RunnerKeyBindings extends RunnerKeyStore {
  /** Forgets the binding of `runnerId` (its folded form): the next key to say it binds it. */
  release(runnerId: string): Promise<{ runnerId: string; firstSeen: Date; lastSeen: Date } | undefined>;
}

const refused = (log: string, runner: string): KeyClaim => ({ ok: false, log, runner });

// looksAlike (bound-tokens.ts) on the folded ids: as long, and at each character equal or one of
// the two not ASCII. Parameters: the folded id, the id as said, the key, the time (SQLite).
const BIND = {
  sqlite: `INSERT INTO "RunnerIdKey" ("idKey","runnerId","publicKey","firstSeen","lastSeen")
    SELECT ?, ?, ?, ?, ? WHERE NOT EXISTS (
      SELECT 1 FROM "RunnerIdKey" r WHERE r."idKey" <> ? AND r."publicKey" <> ? AND length(r."idKey") = length(?)
      AND NOT EXISTS (
        WITH RECURSIVE pos(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM pos WHERE i < length(?))
        SELECT 1 FROM pos WHERE substr(r."idKey", i, 1) <> substr(?, i, 1)
          AND unicode(substr(r."idKey", i, 1)) < 128 AND unicode(substr(?, i, 1)) < 128))
    ON CONFLICT ("idKey") DO NOTHING`,
  postgresql: `INSERT INTO "RunnerIdKey" ("idKey","runnerId","publicKey","firstSeen","lastSeen")
    SELECT $1::text, $2::text, $3::text, (now() AT TIME ZONE 'UTC'), (now() AT TIME ZONE 'UTC') WHERE NOT EXISTS (
      SELECT 1 FROM "RunnerIdKey" r WHERE r."idKey" <> $1::text AND r."publicKey" <> $3::text
      AND char_length(r."idKey") = char_length($1::text)
      AND NOT EXISTS (
        SELECT 1 FROM generate_series(1, char_length($1::text)) AS i WHERE substr(r."idKey", i, 1) <> substr($1::text, i, 1)
          AND ascii(substr(r."idKey", i, 1)) < 128 AND ascii(substr($1::text, i, 1)) < 128))
    ON CONFLICT ("idKey") DO NOTHING`,
} as const;

export function runnerKeyStore(db: Db, provider: DbProvider): RunnerKeyBindings {
  /** Binds `idKey` unless it is bound or a look-alike of another key is (one statement, serialised). */
  async function bind(idKey: string, runnerId: string, publicKey: string): Promise<boolean> {
    if (provider === "sqlite") {
      const now = sqliteDate(new Date());
      const params = [idKey, runnerId, publicKey, now, now, idKey, publicKey, idKey, idKey, idKey, idKey];
      return (await db.$executeRawUnsafe(BIND.sqlite, ...params)) === 1;
    }
    // (The query thread runs the Unsafe forms only; the values are parameters.)
    const [, inserted] = await db.$transaction([
      db.$executeRawUnsafe(`SELECT pg_advisory_xact_lock(hashtext('quiver:RunnerIdKey'))`),
      db.$executeRawUnsafe(BIND.postgresql, idKey, runnerId, publicKey),
    ]);
    return inserted === 1;
  }

  /** Bindings of another key to an id that looks like `runnerId` without being it. */
  async function lookAlikes(idKey: string, runnerId: string, publicKey: string) {
    const rows = await db.runnerIdKey.findMany({ select: { idKey: true, runnerId: true, publicKey: true } });
    return rows.filter((r) => r.idKey !== idKey && r.publicKey !== publicKey && looksAlike(r.runnerId, runnerId));
  }
  const otherKey = (id: string) =>
    refused(
      `it is bound to another runner's key (first seen as ${JSON.stringify(id)}); if that runner lost its key, release the id: npm run runner:release -- ${JSON.stringify(id)}`,
      "this runner id is bound to another runner's key",
    );
  const alike = (id: string) =>
    refused(
      `it looks like runner id ${JSON.stringify(id)}, which is bound to another runner's key`,
      "this runner id looks like one bound to another runner's key",
    );

  return {
    async claim(runnerId, publicKey) {
      const idKey = foldedId(runnerId);
      // A lost race (the other insert won) is read again: its key decides.
      for (let attempt = 0; attempt < 3; attempt++) {
        const row = await db.runnerIdKey.findUnique({ where: { idKey } });
        if (row) {
          if (row.publicKey !== publicKey) return otherKey(row.runnerId);
          await db.runnerIdKey.updateMany({ where: { idKey, publicKey }, data: { lastSeen: new Date() } });
          return { ok: true, first: false };
        }
        if (await bind(idKey, runnerId, publicKey)) return { ok: true, first: true };
        // Refused: the id itself was bound meanwhile (read again), or a look-alike is.
        if (await db.runnerIdKey.findUnique({ where: { idKey } })) continue;
        const alikes = await lookAlikes(idKey, runnerId, publicKey);
        if (alikes[0]) return alike(alikes[0].runnerId);
        // That look-alike was released meanwhile: try again.
      }
      return refused("its binding changed while it was read; it may retry", "try again");
    },

    async release(runnerId) {
      const idKey = foldedId(runnerId);
      const row = await db.runnerIdKey.findUnique({ where: { idKey } });
      if (!row) return undefined;
      await db.runnerIdKey.deleteMany({ where: { idKey, publicKey: row.publicKey } });
      return { runnerId: row.runnerId, firstSeen: row.firstSeen, lastSeen: row.lastSeen };
    },
  };
}
