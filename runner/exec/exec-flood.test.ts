// Commands that print as fast as they can, or fill the sandbox's memory, for real, in the warm
// sandbox. Output is read no faster than the runner takes it (exec-server.ts), so the exec
// server's heap does not fill up: it used to pile the output up until V8 gave up (about 470 MB
// under a 1 GiB limit, within 6 s of `yes`). And a command past the memory limit is the one the
// kernel kills: it used to pick the exec server. Either way every command of the sandbox died
// with it; now the commands beside live on.
import { afterAll, beforeAll, expect, it } from "vitest";
import type { Limits } from "./limits";
import { sandboxInfo } from "./sandbox";
import { ShellService } from "./shell";
import { opContext, tempWorkspace } from "../testing/exec";

const MIB = 1024 ** 2;
const LIMITS: Limits = { memoryBytes: 512 * MIB, processes: 64, cpuSeconds: 60, fileBytes: 0 };
const sandbox = sandboxInfo("auto");
let ws: Awaited<ReturnType<typeof tempWorkspace>>;
let shell: ShellService;
const logged: string[] = [];
const HOG = "import os; fd = os.memfd_create('hog'); [os.write(fd, bytes(1 << 20)) for _ in range(1024)]";

beforeAll(async () => {
  ws = await tempWorkspace();
  shell = new ShellService({
    sandbox,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/root" },
    allowNetwork: false,
    limits: LIMITS,
    log: (line) => logged.push(line),
  });
});
afterAll(async () => {
  await shell.dispose();
  await ws.cleanup();
});

type Ran = Awaited<ReturnType<ShellService["run"]>>;

/** The command started beside in the background ends as it should, and the exec server lived on. */
async function expectSurvived(beside: Ran, ctx: ReturnType<typeof opContext>): Promise<void> {
  const handle = (beside.meta as { sessionHandle: string }).sessionHandle;
  let end = beside;
  while ((end.meta as { running: boolean }).running)
    end = await shell.run({ session_id: handle, yield_time_ms: 10_000 }, ctx);
  expect(end.output).toContain("survived");
  expect(logged.join("\n")).not.toMatch(/exec server exited/);
}

it.skipIf(!sandbox.available)(
  "a command flooding its output leaves the sandbox's exec server, and the commands beside it, alive",
  async () => {
    const ctx = opContext(ws.workspace);
    const beside = await shell.run({ command: "sleep 9; echo survived", timeout_ms: 60_000, yield_time_ms: 500 }, ctx);
    expect(beside.meta).toMatchObject({ running: true });
    const flood = await shell.run({ command: "timeout 6 yes; echo flood-ended", timeout_ms: 60_000 }, ctx);
    // Its tail: the head is a megabyte of y.
    expect(flood.output.slice(-300)).toContain("flood-ended");
    expect(flood.output.slice(-300)).not.toMatch(/exec server/);
    expect((flood.meta as { totalBytes: number }).totalBytes).toBeGreaterThan(MIB);
    await expectSurvived(beside, ctx);
  },
  90_000,
);

it.skipIf(!sandbox.available)(
  "a command that fills the sandbox's memory is the one killed, not the exec server the others need",
  async () => {
    const ctx = opContext(ws.workspace);
    const score = await shell.run({ command: "cat /proc/self/oom_score_adj" }, ctx);
    expect(Number(score.output.trim())).toBeGreaterThanOrEqual(500);
    const beside = await shell.run({ command: "sleep 6; echo survived", timeout_ms: 60_000, yield_time_ms: 500 }, ctx);
    expect(beside.meta).toMatchObject({ running: true });
    // Past the sandbox's 512 MiB in pages no process maps (a memfd written, never mapped), so no
    // process's own size points the kernel at the one to kill.
    const hog = await shell.run({ command: `python3 -c "${HOG}"; echo hog-ended $?`, timeout_ms: 60_000 }, ctx);
    expect(hog.output).toMatch(/hog-ended (137|1)/);
    await expectSurvived(beside, ctx);
  },
  90_000,
);
