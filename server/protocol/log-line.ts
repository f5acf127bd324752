// The shape of a log line, shared by the server (server/log.ts) and the runner (runner/log.ts):
// the local runner writes into the stream the server writes into, so an operator's collector
// reads both, and one process's line must parse like the other's. Off a terminal a line is one
// JSON object (pino's fields: level as a number, time in epoch ms, pid, scope, msg); on a
// terminal `readableLine` turns it into `12:00:01 WARN [hub] message key=value`. The level
// names (QUIVER_LOG_LEVEL) are validated with one schema in both processes.
import { z } from "zod";

export const LogLevelName = z.enum(["debug", "info", "warn", "error"]);
export type LogLevel = z.infer<typeof LogLevelName>;

export const LogLine = z
  .object({
    level: z.number().int(),
    time: z.number(),
    pid: z.number().int(),
    scope: z.string().optional(),
    msg: z.string(),
  })
  .passthrough();
export type LogLine = z.infer<typeof LogLine>;

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
  const name = NAMES[level as number] ?? String(level);
  return `${at} ${name} ${scope ? `[${String(scope)}] ` : ""}${String(msg ?? "")}${extra.length ? ` ${extra.join(" ")}` : ""}${tail}\n`;
}

/** The JSON lines of a stream's text that are log lines; other text (a crash's stack) is skipped. */
export function parseLogLines(text: string): LogLine[] {
  const lines: LogLine[] = [];
  for (const raw of text.split("\n")) {
    if (!raw.startsWith("{")) continue;
    try {
      const r = LogLine.safeParse(JSON.parse(raw));
      if (r.success) lines.push(r.data);
    } catch {
      // not JSON after all
    }
  }
  return lines;
}
