// The Quiver server process: validate the environment, start everything, stop cleanly when asked
// (stop-requests.ts: Ctrl-C, SIGTERM, a closed terminal, the `--parent-pid` process gone), runner
// child included. `--dev` serves the web app with hot reload; `--no-web` serves no pages (the
// API, runner and terminal sockets only), which is how the test of the compiled start runs it
// without a `next build`.
import { accessSync, constants, existsSync } from "node:fs";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { EnvError, parseEnv } from "./env";
import { startQuiver } from "./app";
import { isDatabaseFault } from "./db/faults";
import { scoped } from "./log";
import { parentPidArg, watchStopRequests } from "./stop-requests";

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const dev = process.argv.includes("--dev");
const web = !process.argv.includes("--no-web");

async function main(): Promise<void> {
  let env;
  let parentPid;
  try {
    parentPid = parentPidArg(process.argv.slice(2));
    env = parseEnv({ ...process.env, NODE_ENV: dev ? "development" : (process.env.NODE_ENV ?? "production") });
  } catch (err) {
    if (err instanceof EnvError) {
      console.error(`quiver: ${err.message}`);
      process.exit(1);
    }
    throw err;
  }
  process.env.NEXT_TELEMETRY_DISABLED = "1";
  // A configuration clash found only at start (a runner id bound twice) is one line, as parseEnv's.
  const quiver = await startQuiver({ env, root, dev, web }).catch((err: unknown) => {
    if (!(err instanceof EnvError)) throw err;
    console.error(`quiver: ${err.message}`);
    process.exit(1);
  });
  const log = scoped("quiver");
  log.info(`ready on ${quiver.url} (database: ${quiver.services.dbProvider}, data: ${env.dataDir})`);

  watchStopRequests({
    parentPid,
    stop: (why) => {
      log.info(`${why}: stopping`);
      quiver.stop().then(
        () => process.exit(0),
        (err) => {
          log.error({ err }, "stop failed");
          process.exit(1);
        },
      );
    },
    now: () => process.exit(130),
  });
}

/** A data folder that cannot be created or written (before the database is reached), in words. */
function folderFault(err: unknown): string | undefined {
  const e = err as NodeJS.ErrnoException;
  if (!e?.path) return undefined;
  let code = e.code ?? "";
  // A recursive mkdir under a read-only mount says ENOENT: ask the nearest folder that exists.
  if (code === "ENOENT" && e.syscall === "mkdir") {
    let dir = e.path;
    while (!existsSync(dir) && dirname(dir) !== dir) dir = dirname(dir);
    try {
      accessSync(dir, constants.W_OK);
    } catch (denied) {
      code = (denied as NodeJS.ErrnoException).code ?? code;
    }
  }
  const why = {
    EROFS: "the file system is read-only",
    EACCES: "permission denied",
    EPERM: "permission denied",
    ENOSPC: "the disk is full",
  }[code];
  return why
    ? `cannot write ${e.path}: ${why}. Set QUIVER_DATA_DIR (or QUIVER_WORKSPACE) to a folder the server may write.`
    : undefined;
}

main().catch((err) => {
  // A database that cannot be opened or written is the operator's to fix: the line says where
  // and how (db/faults.ts); a stack trace would only bury it.
  console.error(`quiver: ${isDatabaseFault(err) ? err.message : (folderFault(err) ?? (err as Error).stack ?? err)}`);
  process.exit(1);
});
