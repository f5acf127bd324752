// Test helper: the server and runner process a test starts (runner.ts), and the folders it
// makes, all gone after each test of the file whether it passed or threw.
import { rm } from "node:fs/promises";
import { afterEach } from "vitest";
import type { RunnerChild, TestServer } from "./runner";

export interface RunnerPerTest {
  /** Set by the test; a test may close it and set another. */
  server?: TestServer;
  runner?: RunnerChild;
  /** Removed after the test. */
  dirs: string[];
}

export function useRunnerPerTest(): RunnerPerTest {
  const t: RunnerPerTest = { dirs: [] };
  afterEach(async () => {
    await t.runner?.stop();
    await t.server?.close();
    t.runner = t.server = undefined;
    for (const d of t.dirs.splice(0)) await rm(d, { recursive: true, force: true });
  });
  return t;
}
