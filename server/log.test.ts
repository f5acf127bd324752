// The server's logger (log.ts): the level filters, each line is one JSON object carrying its
// scope and a serialized error, the readable form on a terminal, and QUIVER_LOG_LEVEL is read.
import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { createLogger, readableLine, scoped, type LogLevel } from "./log";

function collect(level: LogLevel, readable = false) {
  const lines: string[] = [];
  const destination = { write: (s: string) => void lines.push(s) };
  return {
    lines,
    log: readable ? createLogger({ level, destination, readable: true }) : createLogger({ level, destination }),
  };
}

describe("server logger", () => {
  it("drops lines below its level and keeps those at or above it", () => {
    const { lines, log } = collect("warn");
    log.debug("d");
    log.info("i");
    log.warn("w");
    log.error("e");
    expect(lines.map((l) => (JSON.parse(l) as { msg: string }).msg)).toEqual(["w", "e"]);
  });

  it("writes one JSON object per line with level, time, scope, message and the error's stack", () => {
    const { lines, log } = collect("debug");
    const hub = scoped("hub", log);
    hub.error({ err: new Error("disk full") }, "could not store events");
    hub.debug("again");
    expect(lines).toHaveLength(2);
    expect(lines.every((l) => l.endsWith("\n") && l.trimEnd().split("\n").length === 1)).toBe(true);
    const first = JSON.parse(lines[0]) as Record<string, unknown> & {
      err: { message: string; stack: string; type: string };
    };
    expect(first).toMatchObject({
      level: 50,
      scope: "hub",
      msg: "could not store events",
      pid: process.pid,
      err: { type: "Error", message: "disk full" },
    });
    expect(typeof first.time).toBe("number");
    expect(first.err.stack).toMatch(/disk full\n\s+at /);
    expect(JSON.parse(lines[1])).toMatchObject({ level: 20, scope: "hub", msg: "again" });
  });

  it("on a terminal, writes a readable line: time, level, [scope], message, fields, then the stack", () => {
    const { lines, log } = collect("info", true);
    scoped("engine", log).warn({ turnId: "t1" }, "turn slow");
    scoped("engine", log).error({ err: new Error("boom") }, "turn failed");
    expect(lines[0]).toMatch(/^\d\d:\d\d:\d\d WARN \[engine\] turn slow turnId=t1\n$/);
    expect(lines[1]).toMatch(/^\d\d:\d\d:\d\d ERROR \[engine\] turn failed\nError: boom\n\s+at /);
    expect(readableLine("not json")).toBe("not json");
  });

  it("takes its level from QUIVER_LOG_LEVEL, and JSON when stdout is not a terminal", () => {
    const script =
      'import { scoped } from "./server/log.ts"; const l = scoped("probe"); l.info("info line"); l.error("error line");';
    const run = (level: string) =>
      execFileSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
        env: { ...process.env, QUIVER_LOG_LEVEL: level },
        encoding: "utf8",
      })
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as { msg: string; scope: string });
    expect(run("error").map((l) => l.msg)).toEqual(["error line"]);
    expect(run("info")).toEqual([
      expect.objectContaining({ msg: "info line", scope: "probe" }),
      expect.objectContaining({ msg: "error line", scope: "probe" }),
    ]);
  });
});
