// Resource limits, for real: a command that allocates past the memory limit is killed and the
// model is told so; a fork bomb stays within the process limit and ends (at its timeout) with
// the machine fine; a file past the size limit fails; a CPU hog is stopped; the same in a
// terminal. Sandboxed and not. The fork bomb runs only where the process cgroup is verified.
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { formatBytes, cgroupsUsable, limitsFromEnv, parseSize, rlimitPrefix, type Limits } from "./limits";
import { sandboxInfo, type SandboxMode } from "./sandbox";
import { ShellService } from "./shell";
import { opContext, screenPtys, settledProcesses, tempWorkspace } from "../testing/exec";

const MIB = 1024 ** 2;
// CPU 4 s, not 1: filling 700 MB against a 256 MiB cgroup spends over a second of CPU in page
// faults and reclaim on some kernels before the OOM kill, and the memory test must see memory.
const LIMITS: Limits = { memoryBytes: 256 * MIB, processes: 64, cpuSeconds: 4, fileBytes: 1 * MIB };
const modes: SandboxMode[] = sandboxInfo("auto").available ? ["auto", "off"] : ["off"];
const cgroups = cgroupsUsable();
const env = () => ({ PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/root" });

describe("limit settings", () => {
  it("reads sizes and counts, 0 for none, and refuses nonsense naming the variable", () => {
    expect(parseSize("X", "4g")).toBe(4 * 1024 ** 3);
    expect(parseSize("X", "256MiB")).toBe(256 * MIB);
    expect(parseSize("X", "0")).toBe(0);
    expect(limitsFromEnv({ QUIVER_LIMIT_MEMORY: "512m", QUIVER_LIMIT_PROCESSES: "0" })).toMatchObject({
      memoryBytes: 512 * MIB,
      processes: 0,
      cpuSeconds: 14400,
    });
    expect(() => limitsFromEnv({ QUIVER_LIMIT_FILE_SIZE: "lots" })).toThrow(/QUIVER_LIMIT_FILE_SIZE/);
    expect(formatBytes(256 * MIB)).toBe("256 MiB");
  });

  it("bounds memory by data size per process only where no cgroup does (never by address space)", () => {
    const flags = (byCgroup: boolean) => rlimitPrefix(LIMITS, byCgroup).slice(1, -1);
    expect(flags(true)).toEqual(["--cpu=4:9", `--fsize=${MIB}`]);
    expect(flags(false)).toEqual(["--cpu=4:9", `--fsize=${MIB}`, `--data=${256 * MIB}`]);
  });
});

describe.each(modes)("limits per command (sandbox %s)", (mode) => {
  let ws: Awaited<ReturnType<typeof tempWorkspace>>;
  let shell: ShellService;
  beforeAll(async () => {
    ws = await tempWorkspace();
    shell = new ShellService({ sandbox: sandboxInfo(mode), env: env(), allowNetwork: false, limits: LIMITS });
  });
  afterAll(async () => {
    await shell.dispose();
    await ws.cleanup();
  });
  const run = (command: string, timeout_ms = 30_000) => shell.run({ command, timeout_ms }, opContext(ws.workspace));

  it.runIf(cgroups)(
    "kills a command that allocates past the memory limit and says so",
    async () => {
      const r = await run(`python3 -c "b = bytearray(700 * 1024 * 1024); print('sur' + 'vived', len(b))"`);
      expect(r.output).not.toContain("survived");
      expect(r.output).toContain("killed: memory limit 256 MiB reached");
      // The next command runs normally: the limit bounded that command, not the runner.
      expect((await run("echo fine")).output).toContain("fine");
    },
    60_000,
  );

  it.runIf(cgroups)(
    "bounds a fork bomb, which ends with its command, leaving nothing behind",
    async () => {
      // Guard: the bomb runs only once a command is seen inside a pids cgroup with our limit.
      const where = await run("cat /proc/self/cgroup");
      const line = where.output.split("\n").find((l) => /:pids:|^0::/.test(l));
      expect(line).toMatch(/quiver-/);
      const started = Date.now();
      // The bomb's first shell waits 3 s then ends, and its PID namespace with it.
      const r = await run(":(){ :|:& };:; sleep 3", 20_000);
      expect(r.meta).toMatchObject({ running: false });
      expect(r.output).toMatch(/process limit 64 reached: \d+ forks? refused/);
      expect(Date.now() - started).toBeLessThan(20_000);
      expect(await settledProcesses(":|:&")).toEqual([]);
      expect((await run("echo alive")).output).toContain("alive");
    },
    60_000,
  );

  it("fails a write past the file size limit", async () => {
    const r = await run("head -c 3M /dev/zero > big.bin; echo status=$?");
    expect(r.output).toMatch(/File size limit exceeded/);
    expect(r.output).toContain("status=153");
    expect(statSync(join(ws.dir, "big.bin")).size).toBe(1 * MIB);
  }, 30_000);

  it("stops a CPU hog at the CPU time limit and says so", async () => {
    const r = await run("python3 -c 'while True: pass'");
    expect(r.output).toContain("killed: CPU time limit reached");
    expect(r.meta).toMatchObject({ running: false, stopReason: null });
  }, 30_000);
});

describe.each(modes)("limits per terminal (sandbox %s)", (mode) => {
  it("kills an allocation past the memory limit and fails a file past the size limit, in the terminal", async () => {
    const ws = await tempWorkspace();
    const { ptys, screen } = screenPtys({
      workspaceRoot: ws.dir,
      sandbox: sandboxInfo(mode),
      env: env(),
      network: false,
      limits: LIMITS,
    });
    try {
      ptys.handle({ type: "pty.open", ptyId: "p1", sessionId: "s1", cols: 200, rows: 50 });
      const alloc = cgroups ? `python3 -c "b = bytearray(700 * 1024 * 1024); print('sur' + 'vived')"; ` : "";
      ptys.handle({
        type: "pty.input",
        ptyId: "p1",
        data: `${alloc}head -c 3M /dev/zero > big.bin; echo done-$((6*7))\r`,
      });
      const until = Date.now() + 30_000;
      while (!screen().includes("done-42") && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
      expect(screen()).toContain("done-42");
      expect(screen()).toMatch(/File size limit exceeded/);
      expect(existsSync(join(ws.dir, "big.bin")) && statSync(join(ws.dir, "big.bin")).size).toBe(1 * MIB);
      if (cgroups) {
        expect(screen()).toMatch(/Killed/);
        expect(screen()).not.toMatch(/survived/);
        const until2 = Date.now() + 5000;
        while (!screen().includes("quiver: killed: memory limit 256 MiB reached") && Date.now() < until2)
          await new Promise((r) => setTimeout(r, 50));
        expect(screen()).toContain("quiver: killed: memory limit 256 MiB reached");
      }
    } finally {
      await ptys.dispose();
      await ws.cleanup();
    }
  }, 60_000);
});
