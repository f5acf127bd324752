// `npm run runner:release -- <runner id>`: forgets which key a runner id of the shared token is
// bound to (key-store.ts), for a runner machine rebuilt without its old key; the next runner to
// say the id binds it to its own. Reads the server's environment (DATABASE_URL, QUIVER_DATA_DIR)
// as the server does. A runner connected under the id keeps its connection until it reconnects.
import { defaultDbUrl, openDb } from "../../db";
import { EnvError, parseEnv } from "../../env";
import { runnerKeyStore } from "./key-store";

const USAGE = "usage: npm run runner:release -- <runner id>";

async function main(): Promise<number> {
  const ids = process.argv.slice(2).filter((a) => a !== "--");
  if (ids.length !== 1 || !ids[0].trim()) {
    console.error(USAGE);
    return 2;
  }
  let env;
  try {
    env = parseEnv(process.env);
  } catch (err) {
    if (!(err instanceof EnvError)) throw err;
    console.error(err.message);
    return 2;
  }
  const handle = await openDb(defaultDbUrl(env.dataDir, env.DATABASE_URL));
  try {
    const released = await runnerKeyStore(handle.db, handle.provider).release(ids[0]);
    if (!released) {
      console.log(`runner id ${JSON.stringify(ids[0])} is bound to no key; nothing to release`);
      return 0;
    }
    console.log(
      `released runner id ${JSON.stringify(released.runnerId)} (bound since ${released.firstSeen.toISOString()}, last seen ${released.lastSeen.toISOString()}): the next runner to connect as it binds it to its key`,
    );
    return 0;
  } finally {
    await handle.close();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(`runner:release failed: ${(err as Error).message}`);
    process.exit(1);
  },
);
