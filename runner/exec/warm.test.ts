// The warm sandbox on real bubblewrap: one exec server serves many commands, each command's
// kill stays inside its own PID namespace, a dead exec server fails its command clearly and is
// replaced on the next one, and an idle sandbox goes away.
import { mkdir, mkdtemp, readFile, readlink, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { ShellResultMeta, type ShellInput } from "../../server/protocol/exec-ops";
import { scrubEnv } from "./env";
import { sandboxInfo } from "./sandbox";
import { ShellService } from "./shell";
import { opContext, processesMatching, settledProcesses, tempWorkspace } from "../testing/exec";

vi.setConfig({ testTimeout: 30_000 });

let unique = 100;
const tag = () => `${700 + Math.random()}`.slice(0, 9) + `${unique++}`;

/** Outer pids of the exec servers whose sandbox is `workspace` (their cwd is the workspace). */
async function execServers(workspace: string): Promise<number[]> {
  const found: number[] = [];
  for (const pid of await processesMatching("exec-server")) {
    try {
      const cmdline = await readFile(`/proc/${pid}/cmdline`, "utf8");
      if (!cmdline.startsWith(process.execPath)) continue; // bwrap's own processes carry the same argv
      if (!/exec-server(\.ts|-[0-9a-f]{16}\.mjs)\0/.test(cmdline)) continue;
      if ((await readlink(`/proc/${pid}/cwd`)) === workspace) found.push(pid);
    } catch {
      /* gone */
    }
  }
  return found;
}

describe.runIf(sandboxInfo("auto").available)("warm sandbox (bubblewrap)", () => {
  let ws: Awaited<ReturnType<typeof tempWorkspace>>;
  let home: string;
  let shell: ShellService;
  beforeAll(async () => {
    ws = await tempWorkspace();
    home = await mkdtemp(join(tmpdir(), "quiver-warm-home-"));
  });
  afterAll(async () => {
    await ws.cleanup();
    await rm(home, { recursive: true, force: true });
  });
  afterEach(() => shell?.dispose());

  const make = (sandboxIdleMs?: number) =>
    (shell = new ShellService({
      sandbox: sandboxInfo("auto"),
      env: scrubEnv({ ...process.env, HOME: home }),
      allowNetwork: true,
      sandboxIdleMs,
    }));
  const run = async (input: ShellInput) => {
    const r = await shell.run(input, opContext(ws.workspace));
    return { ...r, meta: r.meta ? ShellResultMeta.parse(r.meta) : undefined };
  };

  /** The workspace's exec servers once their count is `n` (or 8 s have passed): one still
   *  exiting on a loaded machine is not one too many. */
  const settledTo = async (n: number) => {
    const until = Date.now() + 8_000;
    let now = await execServers(ws.dir);
    while (now.length !== n && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 100));
      now = await execServers(ws.dir);
    }
    return now;
  };
  const noneLeft = () => settledTo(0);

  it("serves many commands from one exec server, each in a PID namespace of its own", async () => {
    make();
    const pids = new Set<string>();
    for (let i = 0; i < 3; i++) {
      const r = await run({ command: "echo $$; ls /proc | grep -c '^[0-9]'" });
      const [pid, count] = r.output.trim().split("\n");
      pids.add(pid);
      expect(Number(count)).toBeLessThan(5); // bash and ls and grep, not the exec server
    }
    expect([...pids]).toEqual(["1"]);
    const servers = await execServers(ws.dir);
    expect(servers).toHaveLength(1);
    // The bundled exec server under bare node: no TypeScript loader, no esbuild beside it.
    const cmdline = (await readFile(`/proc/${servers[0]}/cmdline`, "utf8")).split("\0");
    expect(cmdline.slice(1, 2)[0]).toMatch(/node_modules\/\.cache\/quiver\/exec-server-[0-9a-f]{16}\.mjs$/);
    expect(cmdline.join(" ")).not.toContain("tsx");
    await run({ command: "true", network: true });
    expect(await execServers(ws.dir)).toHaveLength(2); // network is another namespace
  });

  it("hands the command shell any cwd and command text intact", async () => {
    make();
    await mkdir(join(ws.dir, "it's $HOME \\ here"));
    const command = `pwd\nprintf '%s|' "a'b" 'c\\d' "$((1 + 2))"  \necho "  spaced  " # trailing`;
    const r = await run({ command, cwd: "it's $HOME \\ here" });
    expect(r.output).toBe(`${join(ws.dir, "it's $HOME \\ here")}\na'b|c\\d|3|  spaced  \n`);
  });

  it("a timeout kills its own command's processes and leaves another command's alone", async () => {
    make();
    const [a, b] = [tag(), tag()];
    const other = await run({ command: `echo up; setsid sleep ${a}1 & sleep ${a}2`, yield_time_ms: 300 });
    expect(other.meta?.running).toBe(true);
    const r = await run({ command: `(sleep ${b}1 &); setsid sleep ${b}2 & sleep ${b}3`, timeout_ms: 500 });
    expect(r.meta?.stopReason).toBe("timeout");
    expect(await settledProcesses(b)).toEqual([]);
    expect((await processesMatching(a)).length).toBeGreaterThanOrEqual(2); // its sleeps (and its shell, whose line names them)
    const killed = await run({ session_id: other.meta!.sessionHandle!, kill: true });
    expect(killed.meta).toMatchObject({ running: false, stopReason: "killed" });
    expect(await settledProcesses(a)).toEqual([]);
  });

  it("fails the command in flight when its exec server dies, then starts a new one", async () => {
    await noneLeft(); // the previous test's, still exiting on a busy machine: not the one to kill
    make();
    const t = tag();
    const r1 = await run({ command: `echo started; sleep ${t}1`, yield_time_ms: 300 });
    expect(r1.meta?.running).toBe(true);
    const [server] = await execServers(ws.dir);
    process.kill(server, "SIGKILL");
    const r2 = await run({ session_id: r1.meta!.sessionHandle!, yield_time_ms: 10_000 });
    expect(r2.meta).toMatchObject({ running: false, exitCode: null });
    expect(r2.output).toMatch(/exec server exited .*outcome is unknown/);
    expect(await settledProcesses(t)).toEqual([]);
    const r3 = await run({ command: "echo again" });
    expect(r3.output.trim()).toBe("again");
    expect(r3.meta?.exitCode).toBe(0);
    // The killed one can still be in /proc for a moment while it exits.
    const now = await settledTo(1);
    expect(now).toHaveLength(1);
    expect(now[0]).not.toBe(server);
  });

  it("stops an idle sandbox and starts it again on the next command", async () => {
    await noneLeft(); // the previous test's, still exiting on a busy machine
    // Long enough that scanning /proc on a loaded machine still finds it before it idles out.
    make(1_500);
    await run({ command: "true" });
    expect(await settledTo(1)).toHaveLength(1);
    await noneLeft();
    expect(await execServers(ws.dir)).toEqual([]);
    expect((await run({ command: "echo back" })).output.trim()).toBe("back");
  });

  it("leaves no sandbox process behind on dispose", async () => {
    make();
    const t = tag();
    const r = await run({ command: `sleep ${t}1`, yield_time_ms: 200 });
    expect(r.meta?.running).toBe(true);
    await shell.dispose();
    expect(await settledProcesses(t)).toEqual([]);
    expect(await execServers(ws.dir)).toEqual([]);
  });
});
