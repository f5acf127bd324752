// The local runner's environment carries no model keys, database URL or server secrets.
import { describe, expect, it } from "vitest";
import { runnerEnvironment } from "./local-runner";

describe("runnerEnvironment", () => {
  it("drops provider keys, the database URL and the server's runner token, keeps the rest", () => {
    const env = runnerEnvironment({
      PATH: "/usr/bin",
      HOME: "/root",
      ANTHROPIC_API_KEY: "sk-ant",
      OPENAI_BASE_URL: "http://x",
      DATABASE_URL: "postgresql://u:p@h/db",
      QUIVER_RUNNER_TOKEN: "shared-secret-0123456789",
      QUIVER_SANDBOX: "auto",
    });
    expect(env).toEqual({ PATH: "/usr/bin", HOME: "/root", QUIVER_SANDBOX: "auto" });
  });
});

describe("a local runner that refuses its configuration", () => {
  it("says why once and is not restarted (exit code 2 is not a crash)", async () => {
    const { mkdtemp, rm } = await import("node:fs/promises");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const { fileURLToPath } = await import("node:url");
    const { LocalRunner } = await import("./local-runner");
    const workspace = await mkdtemp(join(tmpdir(), "quiver-lr-"));
    const logs: string[] = [];
    const saved = process.env.QUIVER_SANDBOX;
    process.env.QUIVER_SANDBOX = "sometimes"; // refused by the runner with exit code 2
    const runner = new LocalRunner({ root: fileURLToPath(new URL("..", import.meta.url)), serverUrl: "ws://127.0.0.1:9/runner", token: "t".repeat(32), workspace, log: (l) => logs.push(l) });
    try {
      runner.start();
      const until = Date.now() + 30_000;
      while (!logs.some((l) => l.includes("not restarting")) && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
      await new Promise((r) => setTimeout(r, 1500)); // a restart would have come by now (500 ms backoff)
      expect(logs.filter((l) => l.includes("not restarting"))).toHaveLength(1);
      expect(logs.some((l) => l.includes("restarting in"))).toBe(false);
      expect(runner.pid).toBeUndefined();
    } finally {
      if (saved === undefined) delete process.env.QUIVER_SANDBOX;
      else process.env.QUIVER_SANDBOX = saved;
      await runner.stop();
      await rm(workspace, { recursive: true, force: true });
    }
  }, 40_000);
});
