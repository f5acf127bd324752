// The server's one logger: pino, at the level QUIVER_LOG_LEVEL names (validated in env.ts), one
// child per module (`scoped("hub")`) whose lines carry `scope`. Not on a terminal (a service, a
// container, a pipe) each line is one JSON object; on a terminal it is a short readable line,
// formatted here rather than by a pretty-printing transport (a worker thread and a dependency
// for four fields). Modules whose dependencies take a plain `(message, error?)` function get one
// from `logFn`, so tests can still pass their own.
import { pino, stdSerializers, type DestinationStream, type Logger } from "pino";
import { envSchema } from "./env";

export type LogLevel = "debug" | "info" | "warn" | "error";
export type { Logger };

/** Level from the environment; an invalid one was already refused by parseEnv at start-up. */
function envLevel(): LogLevel {
  const r = envSchema.shape.QUIVER_LOG_LEVEL.safeParse(process.env.QUIVER_LOG_LEVEL);
  return r.success ? r.data : "info";
}

const NAMES: Record<number, string> = { 10: "TRACE", 20: "DEBUG", 30: "INFO", 40: "WARN", 50: "ERROR", 60: "FATAL" };

/** One JSON line in, one readable line out: `12:00:01 WARN [hub] message key=value`, then a stack. */
export function readableLine(json: string): string {
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json;
  }
  const { time, level, scope, msg, err, pid: _pid, hostname: _host, ...rest } = o;
  const at = new Date(typeof time === "number" ? time : Date.now()).toISOString().slice(11, 19);
  const extra = Object.entries(rest).map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`);
  const e = err as { stack?: string; message?: string } | undefined;
  const tail = e ? `\n${e.stack ?? e.message ?? JSON.stringify(e)}` : "";
  return `${at} ${NAMES[level as number] ?? String(level)} ${scope ? `[${String(scope)}] ` : ""}${String(msg ?? "")}${extra.length ? ` ${extra.join(" ")}` : ""}${tail}\n`;
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
