// The server's requests to stop: each signal starts one clean stop, a repeat within REPEAT_MS is
// the same request, a later one means now; a `--parent-pid` process that ends (a real process
// killed with SIGKILL, then reaped, or left a zombie) starts the clean stop too.
import { afterEach, describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { EnvError } from "./env";
import { parentPidArg, REPEAT_MS, watchStopRequests } from "./stop-requests";

let undo: (() => void) | undefined;
afterEach(() => undo?.());

function record(options: { parentPid?: number; clock?: () => number } = {}) {
  const seen: string[] = [];
  undo = watchStopRequests({ ...options, stop: (why) => seen.push(`stop: ${why}`), now: () => seen.push("now") });
  return seen;
}

const until = async (check: () => boolean, ms: number) => {
  const end = Date.now() + ms;
  while (!check() && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
};

describe("watchStopRequests", () => {
  it.each(["SIGINT", "SIGTERM", "SIGHUP"] as const)("%s starts one clean stop", async (signal) => {
    const seen = record();
    process.kill(process.pid, signal);
    await until(() => seen.length > 0, 2000);
    expect(seen).toEqual([`stop: ${signal}`]);
  });

  it("a repeat within REPEAT_MS is the same request; one after it means now", async () => {
    let t = 1_000;
    const seen = record({ clock: () => t });
    process.kill(process.pid, "SIGINT");
    await until(() => seen.length > 0, 2000);
    t += REPEAT_MS / 2;
    process.kill(process.pid, "SIGHUP");
    await new Promise((r) => setTimeout(r, 200));
    expect(seen).toEqual(["stop: SIGINT"]);
    t += REPEAT_MS;
    process.kill(process.pid, "SIGTERM");
    await until(() => seen.length > 1, 2000);
    expect(seen).toEqual(["stop: SIGINT", "now"]);
  });

  it("a parent process killed with SIGKILL starts the clean stop", async () => {
    const parent = spawn("sleep", ["60"], { stdio: "ignore" });
    const seen = record({ parentPid: parent.pid });
    await new Promise((r) => setTimeout(r, 700));
    expect(seen).toEqual([]);
    parent.kill("SIGKILL");
    await until(() => seen.length > 0, 3000);
    expect(seen).toEqual([`stop: parent process ${parent.pid} is gone`]);
  });

  it("a parent that ended but is not reaped yet (a zombie) counts as gone", async () => {
    // `sh` forks `sleep` and then waits on something else: the killed sleep stays a zombie.
    const sh = spawn("sh", ["-c", "sleep 60 & echo $!; exec sleep 60"], { stdio: ["ignore", "pipe", "ignore"] });
    const pid = Number(await new Promise<string>((resolve) => sh.stdout!.once("data", (d) => resolve(String(d)))));
    try {
      const seen = record({ parentPid: pid });
      process.kill(pid, "SIGKILL");
      await until(() => seen.length > 0, 3000);
      expect(() => process.kill(pid, 0)).not.toThrow(); // still there, as a zombie
      expect(seen).toEqual([`stop: parent process ${pid} is gone`]);
    } finally {
      sh.kill("SIGKILL");
    }
  });
});

describe("parentPidArg", () => {
  it("reads --parent-pid, and refuses what is not a process id", () => {
    expect(parentPidArg(["--no-web"])).toBeUndefined();
    expect(parentPidArg(["--parent-pid", "4242", "--dev"])).toBe(4242);
    expect(parentPidArg(["--parent-pid=17"])).toBe(17);
    expect(() => parentPidArg(["--parent-pid", "0"])).toThrow(EnvError);
    expect(() => parentPidArg(["--parent-pid", "12x"])).toThrow(/--parent-pid must be a process id/);
    expect(() => parentPidArg(["--parent-pid"])).toThrow(EnvError);
  });
});
