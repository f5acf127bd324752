// The runner helpers when a runner never connects: the timeout's error carries the runner
// process's exit (or that it still runs) and the tail of its output, so a CI log shows why.
import { rm } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import {
  runnerHarness,
  runnerReport,
  spawnRunner,
  startServer,
  tempDir,
  waitFor,
  waitForRunner,
  type RunnerChild,
} from "./runner";

describe("a runner that does not connect", () => {
  it("exits at once on a bad argument: runnerHarness's timeout names its exit code and its stderr", async () => {
    const err = await runnerHarness({ args: ["--no-such-flag"], connectMs: 10_000 }).then(
      () => null,
      (e: Error) => e,
    );
    expect(err, "the harness should have given up").not.toBeNull();
    expect(err!.message).toMatch(
      /^timed out waiting for runner to connect \(10000 ms\)\nthe runner process \(pid \d+\) exited with code 2\nits stderr:\n {2}\| .*Unknown option '--no-such-flag'/,
    );
    expect(err!.message).toMatch(/\nits stdout \(nothing\)$/);
  }, 40_000);

  it("keeps retrying a server that is gone: the report says it still runs and shows its last lines", async () => {
    const gone = await startServer();
    await gone.close();
    const dir = await tempDir();
    const runner = spawnRunner({ url: gone.url, workspace: dir });
    try {
      await waitFor(() => runner.stderr().includes("reconnecting in"), 20_000, "the runner's first retry");
      const message = await waitForRunner(runner, () => false, 50, "runner to connect").then(
        () => "connected?",
        (e: Error) => e.message,
      );
      expect(message).toMatch(/^timed out waiting for runner to connect \(50 ms\)\n/);
      expect(message).toMatch(/\nthe runner process \(pid \d+\) is still running\n/);
      expect(message).toMatch(/connection error: connect ECONNREFUSED/);
    } finally {
      await runner.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("shows only the last 40 lines, and a signal when one ended it", () => {
    const lines = Array.from({ length: 100 }, (_, i) => `line ${i + 1}`).join("\n") + "\n";
    const fake = {
      child: { pid: 42, exitCode: null, signalCode: "SIGKILL" },
      stderr: () => lines,
      stdout: () => "a stray print\n",
    } as unknown as RunnerChild;
    const report = runnerReport(fake);
    expect(report.split("\n").slice(0, 2)).toEqual([
      "the runner process (pid 42) was killed by SIGKILL",
      "its stderr (last 40 of 100 lines):",
    ]);
    expect(report).toContain("  | line 61\n");
    expect(report).not.toContain("line 60\n");
    expect(report).toMatch(/ {2}\| line 100\nits stdout:\n {2}\| a stray print$/);
  });
});
