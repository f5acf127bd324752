// `npm start` as a process manager runs it (a container's PID 1, a supervisor): SIGTERM goes to
// npm alone. npm forwards it to its child; were that child a shell running node (npm's plain
// `sh -c`), the shell would die and leave the server, its runner and its port behind. The
// script execs node, so the server itself gets the signal and stops cleanly.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { freePort } from "../testing/ports";

const root = join(import.meta.dirname, "..", "..");

const childrenOf = (pid: number): number[] => {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
};
const argvOf = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean);
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function until<T>(
  what: string,
  probe: () => T | undefined | Promise<T | undefined>,
  ms: number,
  log: () => string,
) {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await Promise.resolve()
      .then(probe)
      .catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what} within ${ms / 1000} s; output:\n${log()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("npm start", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "quiver-npm-start-"));
  let group: number | undefined;
  afterAll(() => {
    if (group) {
      try {
        process.kill(-group, "SIGKILL");
      } catch {
        // already gone
      }
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("runs the server as npm's own child, which a SIGTERM to npm alone stops with its runner", async () => {
    const port = await freePort();
    let output = "";
    // Its own process group, so the test can clean up after a failure without signalling itself.
    const npm = spawn("npm", ["start", "--", "--no-web"], {
      cwd: root,
      detached: true,
      env: { ...process.env, PORT: String(port), QUIVER_DATA_DIR: dataDir, QUIVER_LOCAL_RUNNER: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    group = npm.pid!;
    npm.stdout!.on("data", (d) => (output += d));
    npm.stderr!.on("data", (d) => (output += d));
    const exited = new Promise<void>((resolve) => npm.once("exit", () => resolve()));

    await until(
      "a healthy server",
      async () => ((await fetch(`http://127.0.0.1:${port}/api/health`)).status === 200 ? true : undefined),
      150_000,
      () => output,
    );
    const [server] = childrenOf(npm.pid!);
    expect(argvOf(server).slice(1)).toEqual(["server/start.mjs", "--no-web"]);
    expect(argvOf(server)[0]).toMatch(/node$/);
    const runner = await until(
      "its runner",
      () => childrenOf(server).find((p) => argvOf(p).some((a) => a.includes("runner-main"))),
      30_000,
      () => output,
    );

    npm.kill("SIGTERM");
    await exited;
    await until(
      "the server and its runner gone",
      () => (alive(server) || alive(runner) ? undefined : true),
      15_000,
      () => output,
    );
    expect(output).toMatch(/SIGTERM: stopping/);
    await expect(fetch(`http://127.0.0.1:${port}/api/health`)).rejects.toThrow();
  }, 200_000);
});
