// The runner's logger (log.ts) in a real runner process: with stderr a pipe every line is one
// JSON object with scope and level, QUIVER_LOG_LEVEL filters debug out (or lets it in), an
// invalid level is refused at boot, and on a terminal the line is the readable form.
import { afterEach, describe, expect, it } from "vitest";
import { rm } from "node:fs/promises";
import { parseLogLines, type LogLine } from "../server/protocol/log-line";
import { spawnRunner, tempDir, waitFor, type RunnerChild } from "../server/testing/runner";
import { createLogger, scoped } from "./log";

const NOWHERE = "ws://127.0.0.1:9/runner";
const DEBUG = 20;
const INFO = 30;
const ERROR = 50;

let dirs: string[] = [];
let runners: RunnerChild[] = [];
afterEach(async () => {
  await Promise.all(runners.map((r) => r.stop()));
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
  dirs = [];
  runners = [];
});

/** A runner started at `level`, once it says it is serving; its stderr's lines so far. */
async function servingAt(level: string | undefined): Promise<{ lines: LogLine[]; text: string }> {
  const dir = await tempDir();
  dirs.push(dir);
  const runner = spawnRunner({
    url: NOWHERE,
    workspace: dir,
    env: { NODE_ENV: "test", QUIVER_LOG_LEVEL: level ?? "" },
  });
  runners.push(runner);
  await waitFor(() => parseLogLines(runner.stderr()).some((l) => l.msg.startsWith("serving ")), 20_000, "serving");
  return { lines: parseLogLines(runner.stderr()), text: runner.stderr() };
}

describe("runner logger", () => {
  it("writes JSON lines with scope and level when stderr is not a terminal, and drops debug at info", async () => {
    const { lines, text } = await servingAt(undefined);
    const nonEmpty = text.split("\n").filter((l) => l.trim());
    expect(lines).toHaveLength(nonEmpty.length);
    const serving = lines.find((l) => l.msg.startsWith("serving "));
    expect(serving).toMatchObject({ level: INFO, scope: "runner", pid: expect.any(Number) as number });
    expect(lines.filter((l) => l.level === DEBUG)).toEqual([]);
  }, 30_000);

  it("lets debug lines through at QUIVER_LOG_LEVEL=debug", async () => {
    const { lines } = await servingAt("debug");
    expect(lines.find((l) => l.msg === "configuration")).toMatchObject({ level: DEBUG, scope: "runner" });
  }, 30_000);

  it("refuses an invalid QUIVER_LOG_LEVEL at boot (exit 2, one error line)", async () => {
    const dir = await tempDir();
    dirs.push(dir);
    const runner = spawnRunner({
      url: NOWHERE,
      workspace: dir,
      env: { NODE_ENV: "test", QUIVER_LOG_LEVEL: "verbose" },
    });
    expect((await runner.exited).code).toBe(2);
    expect(parseLogLines(runner.stderr())).toEqual([
      expect.objectContaining({
        level: ERROR,
        scope: "runner",
        msg: expect.stringMatching(/QUIVER_LOG_LEVEL.*"verbose"/),
      }),
    ]);
  });

  it("writes the readable form on a terminal, level filter included", () => {
    const out: string[] = [];
    const log = scoped(
      "exec",
      createLogger({ level: "info", readable: true, destination: { write: (s) => void out.push(s) } }),
    );
    log.debug("hidden");
    log.warn("warm sandbox for ws: gone");
    expect(out).toHaveLength(1);
    expect(out[0]).toMatch(/^\d\d:\d\d:\d\d WARN \[exec\] warm sandbox for ws: gone\n$/);
  });
});
