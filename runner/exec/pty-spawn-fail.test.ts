// A terminal whose start fails after node-pty has forked (its read stream of the PTY master
// could not be made, the number closed under it): the start is tried once more; when that fails
// too the runner says so and lives on. Either way the shell a failed start left is ended.
import { chmod, writeFile } from "node:fs/promises";
import { join } from "node:path";
import tty from "node:tty";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { RunnerToServer } from "../../server/protocol/runner";
import { scrubEnv } from "./env";
import { PtyManager } from "./pty";
import { sandboxInfo, type SandboxMode } from "./sandbox";
import { processesMatching, settledProcesses, tempWorkspace } from "../testing/exec";

vi.setConfig({ testTimeout: 30_000 });

const modes: SandboxMode[] = sandboxInfo("auto").available ? ["auto", "off"] : ["off"];
const RealReadStream = tty.ReadStream;

/** node-pty reads `tty.ReadStream` when it constructs, after the fork: the next `n` fail. */
function failNextStreams(n: number): void {
  let left = n;
  tty.ReadStream = function (...args: ConstructorParameters<typeof RealReadStream>) {
    if (left-- <= 0) return new RealReadStream(...args);
    throw new Error("TTY initialization failed: uv_tty_init returned EINVAL (invalid argument)");
  } as unknown as typeof tty.ReadStream;
}

describe.each(modes)("a terminal that fails after its fork (sandbox %s)", (mode) => {
  let ws: Awaited<ReturnType<typeof tempWorkspace>>;
  let token: string;
  let sent: RunnerToServer[];
  let manager: PtyManager;
  let crashes: unknown[];
  const onCrash = (e: unknown) => crashes.push(e);
  beforeAll(async () => (ws = await tempWorkspace()));
  afterAll(() => ws.cleanup());
  const start = async () => {
    // A shell that outlives its terminal's master unless something kills it.
    token = `${60 + Math.random()}`.slice(0, 9);
    const shell = join(ws.dir, "shell.sh");
    await writeFile(shell, `#!/bin/sh\ntrap '' HUP\nexec sleep ${token}\n`);
    await chmod(shell, 0o755);
    sent = [];
    crashes = [];
    process.on("uncaughtException", onCrash);
    manager = new PtyManager({
      workspaceRoot: ws.dir,
      sandbox: sandboxInfo(mode),
      env: scrubEnv({ ...process.env }),
      send: (m) => (sent.push(m), true),
      shell,
    });
  };
  afterEach(async () => {
    tty.ReadStream = RealReadStream;
    process.off("uncaughtException", onCrash);
    await manager.dispose();
  });
  const until = async (check: () => boolean) => {
    for (const end = Date.now() + 10_000; !check() && Date.now() < end;) await new Promise((r) => setTimeout(r, 20));
  };

  it("is started again once, and the shell the failed start left is killed", async () => {
    await start();
    failNextStreams(1);
    manager.handle({ type: "pty.open", ptyId: "f1", sessionId: "s1", cols: 80, rows: 24 });
    await until(() => manager.size === 1);
    expect(manager.size).toBe(1);
    const live = manager.pid("f1")!;
    // Of the two shells, the one of the failed start goes; the terminal's own stays.
    for (const end = Date.now() + 5_000; (await processesMatching(token)).length !== 1 && Date.now() < end;)
      await new Promise((r) => setTimeout(r, 50));
    expect(await processesMatching(token)).toHaveLength(1);
    expect(sent.some((m) => m.type === "pty.exit")).toBe(false);
    expect(manager.pid("f1")).toBe(live);
    expect(crashes).toEqual([]);
  });

  it("is refused with node-pty's error when the second start fails too; the process survives their exits", async () => {
    await start();
    failNextStreams(2);
    manager.handle({ type: "pty.open", ptyId: "f2", sessionId: "s1", cols: 80, rows: 24 });
    await until(() => sent.some((m) => m.type === "pty.exit"));
    expect(sent.find((m) => m.type === "pty.exit")).toMatchObject({
      ptyId: "f2",
      exitCode: null,
      signal: expect.stringContaining("failed to start: TTY initialization failed"),
    });
    // Both shells are killed; their exits reach node-pty, whose 200 ms timers must not throw.
    expect(await settledProcesses(token, 5_000)).toEqual([]);
    await new Promise((r) => setTimeout(r, 500));
    expect(crashes).toEqual([]);
    // The manager still starts terminals.
    manager.handle({ type: "pty.open", ptyId: "f3", sessionId: "s1", cols: 80, rows: 24 });
    await until(() => manager.size === 1);
    expect(manager.size).toBe(1);
  });
});
