// Runner ids bound to runners' keys, trusted on first use: the first runner of the shared
// QUIVER_RUNNER_TOKEN to say an id binds it to its public key in the database, and a later hello
// of that id (or of one that looks like it) must prove the same key. The pool is given this as a
// hook (parts.ts), as executors get everything from the database. The row's primary key is the
// folded id (bound-tokens.ts), so of two first hellos on any number of servers sharing the
// database exactly one is inserted; the other reads the winner's key and is refused.
import type { Db } from "../../db";
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

export function runnerKeyStore(db: Db): RunnerKeyBindings {
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
        const before = await lookAlikes(idKey, runnerId, publicKey);
        if (before[0]) return alike(before[0].runnerId);
        try {
          await db.runnerIdKey.create({ data: { idKey, runnerId, publicKey } });
        } catch (err) {
          if (await db.runnerIdKey.findUnique({ where: { idKey } })) continue;
          throw err;
        }
        // Two look-alike ids have two keys, so no constraint orders their first hellos: each
        // looks after inserting, and one that finds the other gives way. Both may give way (then
        // both retry later); both cannot stay, since the later insert sees the earlier one.
        const after = await lookAlikes(idKey, runnerId, publicKey);
        if (after[0]) {
          await db.runnerIdKey.deleteMany({ where: { idKey, publicKey } });
          return alike(after[0].runnerId);
        }
        return { ok: true, first: true };
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
