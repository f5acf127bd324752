// `npm start` as a process manager runs it (a container's PID 1, a supervisor): SIGTERM goes to
// npm alone. npm forwards it to its child; were that child a shell running node (npm's plain
// `sh -c`), the shell would die and leave the server, its runner and its port behind. The
// script execs node, so the server itself gets the signal and stops cleanly. A closed terminal
// (SIGHUP to the group) is a clean stop too.
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
  const groups: number[] = [];
  afterAll(() => {
    for (const group of groups) {
      try {
        process.kill(-group, "SIGKILL");
      } catch {
        // already gone
      }
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** `npm start -- --no-web` in a process group of its own (so the test can clean up after a
   *  failure without signalling itself), once healthy with its runner. */
  async function startNpm() {
    const port = await freePort();
    let output = "";
    const npm = spawn("npm", ["start", "--", "--no-web"], {
      cwd: root,
      detached: true,
      env: { ...process.env, PORT: String(port), QUIVER_DATA_DIR: dataDir, QUIVER_LOCAL_RUNNER: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    groups.push(npm.pid!);
    npm.stdout!.on("data", (d) => (output += d));
    npm.stderr!.on("data", (d) => (output += d));
    const exited = new Promise<void>((resolve) => npm.once("exit", () => resolve()));
    const log = () => output;
    await until(
      "a healthy server",
      async () => ((await fetch(`http://127.0.0.1:${port}/api/health`)).status === 200 ? true : undefined),
      150_000,
      log,
    );
    const [server] = childrenOf(npm.pid!);
    const runner = await until(
      "its runner",
      () => childrenOf(server).find((p) => argvOf(p).some((a) => a.includes("runner-main"))),
      30_000,
      log,
    );
    const allGone = async () => {
      await exited;
      await until(
        "the server and its runner gone",
        () => (alive(server) || alive(runner) ? undefined : true),
        15_000,
        log,
      );
      await expect(fetch(`http://127.0.0.1:${port}/api/health`)).rejects.toThrow();
    };
    return { npm, server, log, allGone };
  }

  it("runs the server as npm's own child, which a SIGTERM to npm alone stops with its runner", async () => {
    const { npm, server, log, allGone } = await startNpm();
    expect(argvOf(server).slice(1)).toEqual(["server/start.mjs", "--no-web"]);
    expect(argvOf(server)[0]).toMatch(/node$/);
    npm.kill("SIGTERM");
    await allGone();
    expect(log()).toMatch(/SIGTERM: stopping/);
  }, 200_000);

  it("stops cleanly when its terminal closes (SIGHUP to the whole group), not by SIGHUP's default", async () => {
    const { npm, log, allGone } = await startNpm();
    process.kill(-npm.pid!, "SIGHUP");
    await allGone();
    expect(log()).toMatch(/SIGHUP: stopping/);
  }, 200_000);
});
