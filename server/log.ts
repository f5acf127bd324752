// The server's one logger: pino, at the level QUIVER_LOG_LEVEL names (validated in env.ts), one
// child per module (`scoped("hub")`) whose lines carry `scope`. Not on a terminal (a service, a
// container, a pipe) each line is one JSON object; on a terminal it is a short readable line,
// formatted rather than pretty-printed by a transport (a worker thread and a dependency for four
// fields). The line's shape and that formatter are server/protocol/log-line.ts, shared with the
// runner's logger (runner/log.ts), whose lines land in the same stream. Modules whose
// dependencies take a plain `(message, error?)` function get one from `logFn`, so tests can
// still pass their own.
import { pino, stdSerializers, type DestinationStream, type Logger } from "pino";
import { LogLevelName, readableLine, type LogLevel } from "./protocol/log-line";

export type { Logger, LogLevel };
export { readableLine };

/** Level from the environment; an invalid one was already refused by parseEnv at start-up. */
function envLevel(): LogLevel {
  const r = LogLevelName.safeParse(process.env.QUIVER_LOG_LEVEL);
  return r.success ? r.data : "info";
}

/** A stream that writes readable lines to `out`. */
export function readableStream(out: { write(s: string): unknown }): DestinationStream {
  return { write: (line: string) => void out.write(readableLine(line)) };
}

export function createLogger(
  opts: { level?: LogLevel; destination?: DestinationStream; readable?: boolean } = {},
): Logger {
  const readable = opts.readable ?? (!opts.destination && process.stdout.isTTY === true);
  const base = opts.destination ?? pino.destination({ dest: 1, sync: true });
  return pino(
    {
      level: opts.level ?? envLevel(),
      base: { pid: process.pid },
      serializers: { err: stdSerializers.err },
      timestamp: pino.stdTimeFunctions.epochTime,
    },
    readable ? readableStream(opts.destination ?? process.stdout) : base,
  );
}

/** The process's root logger. */
export const rootLog: Logger = createLogger();

/** Sets the level once the environment is parsed (app.ts), for every scope at once. */
export function setLogLevel(level: LogLevel): void {
  rootLog.level = level;
}

/** A module's logger: its lines carry `scope`. */
export function scoped(scope: string, parent: Logger = rootLog): Logger {
  return parent.child({ scope });
}

/** A `(message, error?)` function at one level of a scope, the shape module dependencies take. */
export function logFn(scope: string, level: LogLevel = "error"): (message: string, err?: unknown) => void {
  const l = scoped(scope);
  return (message, err) => (err === undefined ? l[level](message) : l[level]({ err }, message));
}
