// A command that prints as fast as it can, for real, in the warm sandbox: its output is read no
// faster than the runner takes it (exec-server.ts), so the exec server's heap does not fill up.
// It used to pile the output up until V8 gave up (about 470 MB under a 1 GiB limit, within 6 s
// of `yes`), and every command of the sandbox died with it; now the commands beside live on.
// Likewise a command past the sandbox's memory limit is the one the kernel kills (limits.ts
// oomFirstPrefix): it used to take the exec server, the largest process.
import { expect, it } from "vitest";
import type { Limits } from "./limits";
import { sandboxInfo } from "./sandbox";
import type { ShellService } from "./shell";
import { useSandboxShell } from "../testing/sandbox-shell";

const MIB = 1024 ** 2;
const LIMITS: Limits = { memoryBytes: 512 * MIB, processes: 64, cpuSeconds: 60, fileBytes: 0 };
const sandbox = sandboxInfo("auto");
const logged: string[] = [];
const warm = useSandboxShell({ limits: LIMITS, log: (line) => logged.push(line) });

type Ran = Awaited<ReturnType<ShellService["run"]>>;

/** The command started beside in the background ends as it should, and the exec server lived on. */
async function expectSurvived(beside: Ran, ctx: typeof warm.ctx): Promise<void> {
  const handle = (beside.meta as { sessionHandle: string }).sessionHandle;
  let end = beside;
  while ((end.meta as { running: boolean }).running)
    end = await warm.shell.run({ session_id: handle, yield_time_ms: 10_000 }, ctx);
  expect(end.output).toContain("survived");
  expect(logged.join("\n")).not.toMatch(/exec server exited/);
}

it.skipIf(!sandbox.available)(
  "a command flooding its output leaves the sandbox's exec server, and the commands beside it, alive",
  async () => {
    const ctx = warm.ctx;
    const beside = await warm.shell.run(
      { command: "sleep 9; echo survived", timeout_ms: 60_000, yield_time_ms: 500 },
      ctx,
    );
    expect(beside.meta).toMatchObject({ running: true });
    const flood = await warm.shell.run({ command: "timeout 6 yes; echo flood-ended", timeout_ms: 60_000 }, ctx);
    // Its tail: the head is a megabyte of y.
    expect(flood.output.slice(-300)).toContain("flood-ended");
    expect(flood.output.slice(-300)).not.toMatch(/exec server/);
    expect((flood.meta as { totalBytes: number }).totalBytes).toBeGreaterThan(MIB);
    await expectSurvived(beside, ctx);
  },
  90_000,
);

// Past the sandbox's 512 MiB in pages no process maps (a memfd written, never mapped), so no
// process's own size points the kernel at the one to kill.
const HOG = "import os; fd = os.memfd_create('hog'); [os.write(fd, bytes(1 << 20)) for _ in range(1024)]";

it.skipIf(!sandbox.available)(
  "a command that fills the sandbox's memory is the one killed, not the exec server the others need",
  async () => {
    const ctx = warm.ctx;
    const score = await warm.shell.run({ command: "sh -c 'cat /proc/$$/oom_score_adj'" }, ctx);
    expect(Number(score.output.trim())).toBe(1000);
    const beside = await warm.shell.run(
      { command: "sleep 6; echo survived", timeout_ms: 60_000, yield_time_ms: 500 },
      ctx,
    );
    expect(beside.meta).toMatchObject({ running: true });
    const hog = await warm.shell.run({ command: `python3 -c "${HOG}"; echo hog-ended $?`, timeout_ms: 60_000 }, ctx);
    expect(hog.output).toMatch(/hog-ended 137/);
    await expectSurvived(beside, ctx);
  },
  90_000,
);
