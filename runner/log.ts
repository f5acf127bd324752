// The runner's one logger, the same shape as the server's (server/log.ts): pino at the level
// QUIVER_LOG_LEVEL names (checked at boot by main.ts, which the server's local runner inherits
// from it), one child per module (`scoped("exec")`) whose lines carry `scope`. It writes to
// stderr, the runner's log since before it had a logger (stdout is unused); off a terminal each
// line is one JSON object (server/protocol/log-line.ts, the shape the server's lines have), on a
// terminal a readable line. Modules whose dependencies take a plain `(line) => void` get one
// from `logFn`, so tests can still pass their own.
import { pino, stdSerializers, type DestinationStream, type Logger } from "pino";
import { LogLevelName, readableLine, type LogLevel } from "../server/protocol/log-line";

export type { Logger, LogLevel };

/** The level QUIVER_LOG_LEVEL names, or why it names none (main.ts refuses to start then). */
export function levelFromEnv(
  env: NodeJS.ProcessEnv = process.env,
): { ok: true; level: LogLevel } | { ok: false; message: string } {
  const raw = env.QUIVER_LOG_LEVEL;
  if (raw === undefined || raw === "") return { ok: true, level: "info" };
  const r = LogLevelName.safeParse(raw);
  if (r.success) return { ok: true, level: r.data };
  return {
    ok: false,
    message: `QUIVER_LOG_LEVEL must be one of ${LogLevelName.options.join(", ")} (got ${JSON.stringify(raw)})`,
  };
}

export function createLogger(
  opts: { level?: LogLevel; destination?: DestinationStream; readable?: boolean } = {},
): Logger {
  const readable = opts.readable ?? (!opts.destination && process.stderr.isTTY === true);
  const env = levelFromEnv();
  const level = opts.level ?? (env.ok ? env.level : "info");
  // Synchronous, so a line written just before process.exit (a refused configuration) is not lost.
  const destination = readable
    ? { write: (line: string) => void (opts.destination ?? process.stderr).write(readableLine(line)) }
    : (opts.destination ?? pino.destination({ dest: 2, sync: true }));
  return pino(
    {
      level,
      base: { pid: process.pid },
      serializers: { err: stdSerializers.err },
      timestamp: pino.stdTimeFunctions.epochTime,
    },
    destination,
  );
}

/** The process's root logger. */
export const rootLog: Logger = createLogger();

/** A module's logger: its lines carry `scope`. */
export function scoped(scope: string, parent: Logger = rootLog): Logger {
  return parent.child({ scope });
}

/** A `(line) => void` at one level of a scope, the shape the runner's modules take as `log`. */
export function logFn(scope: string, level: LogLevel = "info"): (line: string) => void {
  const l = scoped(scope);
  return (line) => l[level](line);
}
