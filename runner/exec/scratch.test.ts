// The sandbox's memory-backed folders, for real: /tmp and /dev/shm are tmpfs of the sandbox's own,
// bounded by the memory limit (half and a quarter of it), so a command filling them gets ENOSPC
// instead of taking half the machine's RAM each (without cgroups, nothing else would count them);
// /dev itself is read-only. The same for the agent's commands (warm sandbox) and a terminal, with
// and without a memory limit; and a bwrap without `--size` still gets a working sandbox.
import { spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Limits } from "./limits";
import { bwrapArgs, sandboxInfo, tmpfsSizeKnown } from "./sandbox";
import { ShellService } from "./shell";
import { opContext, screenPtys, tempWorkspace } from "../testing/exec";

const MIB = 1024 ** 2;
const LIMITS: Limits = { memoryBytes: 96 * MIB, processes: 64, cpuSeconds: 30, fileBytes: 0 };
const sandbox = sandboxInfo("auto");
const sizes = sandbox.available && tmpfsSizeKnown(sandbox.bwrap!);
const env = () => ({ PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/root" });
// Each fill writes past its bound, then says what the write and the folder's size came to.
const fill = (dir: string, mib: number) =>
  `head -c ${mib}M /dev/zero > ${dir}/fill 2>/dev/null; echo "${dir} status=$? mib=$(( $(stat -c %s ${dir}/fill) / 1048576 ))"; rm -f ${dir}/fill`;
const SHM =
  "python3 -c \"from multiprocessing import shared_memory as s; m=s.SharedMemory(create=True, size=65536); print('shm', 'works'); m.close(); m.unlink()\"";

describe.runIf(sizes)("the sandbox's scratch folders (agent's commands)", () => {
  let ws: Awaited<ReturnType<typeof tempWorkspace>>;
  let shell: ShellService;
  let unlimited: ShellService;
  beforeAll(async () => {
    ws = await tempWorkspace();
    shell = new ShellService({ sandbox, env: env(), allowNetwork: false, limits: LIMITS });
    unlimited = new ShellService({ sandbox, env: env(), allowNetwork: false, limits: { ...LIMITS, memoryBytes: 0 } });
  });
  afterAll(async () => {
    await shell.dispose();
    await unlimited.dispose();
    await ws.cleanup();
  });
  const run = (s: ShellService, command: string) => s.run({ command, timeout_ms: 30_000 }, opContext(ws.workspace));

  it("fills /tmp to half the memory limit and /dev/shm to a quarter, then ENOSPC; shared memory still works", async () => {
    const r = await run(shell, `${fill("/tmp", 60)}; ${fill("/dev/shm", 40)}; ${SHM}`);
    expect(r.output).toContain("/tmp status=1 mib=48");
    expect(r.output).toContain("/dev/shm status=1 mib=24");
    expect(r.output).toContain("shm works");
    // Nothing was killed: the bound is the folder's, and the command went on to its end.
    expect(r.output).not.toMatch(/killed/);
    // The bound is per folder, not spent for good: the next command fills /tmp again.
    expect((await run(shell, fill("/tmp", 60))).output).toContain("/tmp status=1 mib=48");
  }, 60_000);

  it("keeps /dev read-only while its devices still work", async () => {
    const r = await run(
      shell,
      "touch /dev/planted 2>&1; mkdir /dev/x 2>&1; echo data > /dev/null && echo null-ok; ls /dev/pts >/dev/null && echo pts-ok",
    );
    expect(r.output).toMatch(/touch: cannot touch '\/dev\/planted': Read-only file system/);
    expect(r.output).toMatch(/mkdir: cannot create directory '\/dev\/x': Read-only file system/);
    expect(r.output).toContain("null-ok");
    expect(r.output).toContain("pts-ok");
  }, 30_000);

  it("leaves /tmp at the kernel's size without a memory limit", async () => {
    const r = await run(unlimited, `${fill("/tmp", 60)}; touch /dev/planted 2>&1`);
    expect(r.output).toContain("/tmp status=0 mib=60");
    expect(r.output).toMatch(/Read-only file system/);
  }, 30_000);
});

describe.runIf(sizes)("the sandbox's scratch folders (terminal)", () => {
  it("bounds a terminal's /tmp and /dev/shm by its memory limit", async () => {
    const ws = await tempWorkspace();
    const { ptys, screen } = screenPtys({ workspaceRoot: ws.dir, sandbox, env: env(), network: false, limits: LIMITS });
    try {
      ptys.handle({ type: "pty.open", ptyId: "p1", sessionId: "s1", cols: 200, rows: 50 });
      ptys.handle({
        type: "pty.input",
        ptyId: "p1",
        data: `${fill("/tmp", 60)}; ${fill("/dev/shm", 40)}; touch /dev/planted; echo done-$((6*7))\r`,
      });
      const until = Date.now() + 30_000;
      while (!/done-42\s/.test(screen()) && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
      expect(screen()).toContain("/tmp status=1 mib=48");
      expect(screen()).toContain("/dev/shm status=1 mib=24");
      expect(screen()).toMatch(/Read-only file system/);
    } finally {
      await ptys.dispose();
      await ws.cleanup();
    }
  }, 60_000);
});

describe.runIf(sandbox.available)("a bwrap that does not know --size", () => {
  it("is given no size, and the sandbox still starts", () => {
    const dir = mkdtempSync(join(tmpdir(), "quiver-oldbwrap-"));
    try {
      // A bwrap whose help does not list --size (as before 0.8), which is the real one otherwise.
      const old = join(dir, "bwrap");
      writeFileSync(
        old,
        `#!/bin/sh\n[ "$1" = --help ] && { echo "usage: bwrap [OPTIONS...]"; exit 0; }\nexec ${sandbox.bwrap} "$@"\n`,
      );
      chmodSync(old, 0o755);
      expect(tmpfsSizeKnown(old)).toBe(false);
      const spec = { workspace: dir, cwd: dir, network: false, newSession: true, memoryBytes: 64 * MIB };
      const cmd = bwrapArgs(old, spec, ["sh", "-c", "touch /dev/shm/ok && echo started"]);
      expect(cmd.args).not.toContain("--size");
      expect(cmd.args.join(" ")).toContain("--remount-ro /dev");
      const started = spawnSync(cmd.file, cmd.args, { encoding: "utf8", timeout: 20_000 });
      expect(started.stdout.trim()).toBe("started");
      if (sizes)
        expect(bwrapArgs(sandbox.bwrap!, spec, ["true"]).args.join(" ")).toContain(`--size ${32 * MIB} --tmpfs /tmp`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
