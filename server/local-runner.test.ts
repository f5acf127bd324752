// The local runner's environment carries no model keys, database URL or server secrets; it is
// told what its sandbox hides and the server's HOST; a runner that refuses its configuration is
// not restarted.
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { LocalRunner, runnerEnvironment } from "./local-runner";

describe("runnerEnvironment", () => {
  it("drops provider keys, the database URL, the server's runner tokens and mail URL, keeps the rest", () => {
    const env = runnerEnvironment({
      PATH: "/usr/bin",
      HOME: "/root",
      ANTHROPIC_API_KEY: "sk-ant",
      OPENAI_BASE_URL: "http://x",
      DATABASE_URL: "postgresql://u:p@h/db",
      QUIVER_RUNNER_TOKEN: "shared-secret-0123456789",
      QUIVER_RUNNER_TOKENS: "gpu-1=own-secret-0123456789",
      QUIVER_SMTP_URL: "smtp://u:p@mail",
      QUIVER_SANDBOX: "auto",
    });
    expect(env).toEqual({ PATH: "/usr/bin", HOME: "/root", QUIVER_SANDBOX: "auto" });
  });
});

describe("a local runner that refuses its configuration", () => {
  it("says why once and is not restarted (exit code 2 is not a crash)", async () => {
    const workspace = await mkdtemp(join(tmpdir(), "quiver-lr-"));
    const logs: string[] = [];
    const saved = process.env.QUIVER_SANDBOX;
    process.env.QUIVER_SANDBOX = "sometimes"; // refused by the runner with exit code 2
    const runner = new LocalRunner({
      root: fileURLToPath(new URL("..", import.meta.url)),
      serverUrl: "ws://127.0.0.1:9/runner",
      token: "t".repeat(32),
      workspace,
      log: (l) => logs.push(l),
    });
    try {
      runner.start();
      const until = Date.now() + 30_000;
      while (!logs.some((l) => l.includes("not restarting")) && Date.now() < until)
        await new Promise((r) => setTimeout(r, 100));
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

describe("what the local runner is told", () => {
  it("hides the server's source tree and data folder (QUIVER_SANDBOX_HIDE), knows the server's HOST and log level", async () => {
    // A stand-in root whose runner/main.ts writes down the environment it was started with.
    const root = await mkdtemp(join(tmpdir(), "quiver-lr-root-"));
    await mkdir(join(root, "runner"));
    await symlink(fileURLToPath(new URL("../node_modules", import.meta.url)), join(root, "node_modules"));
    await writeFile(
      join(root, "runner", "main.ts"),
      `import { writeFileSync } from "node:fs";\nwriteFileSync(${JSON.stringify(join(root, "env.json"))}, JSON.stringify(process.env));\nprocess.exit(2);\n`,
    );
    const runner = new LocalRunner({
      root,
      serverUrl: "ws://127.0.0.1:9/runner",
      token: "t".repeat(32),
      workspace: root,
      dataDir: "/srv/quiver-data",
      host: "0.0.0.0",
      logLevel: "debug",
      log: () => {},
    });
    try {
      runner.start();
      let env: Record<string, string> | undefined;
      const until = Date.now() + 20_000;
      while (!env && Date.now() < until) {
        env = await readFile(join(root, "env.json"), "utf8").then(
          (t) => JSON.parse(t) as Record<string, string>,
          () => undefined,
        );
        if (!env) await new Promise((r) => setTimeout(r, 100));
      }
      expect(env?.QUIVER_SANDBOX_HIDE?.split(delimiter)).toEqual(expect.arrayContaining([root, "/srv/quiver-data"]));
      expect(env?.HOST).toBe("0.0.0.0");
      expect(env?.QUIVER_LOG_LEVEL).toBe("debug");
      expect(env?.QUIVER_RUNNER_TOKEN).toBe("t".repeat(32));
    } finally {
      await runner.stop();
      await rm(root, { recursive: true, force: true });
    }
  }, 30_000);
});
