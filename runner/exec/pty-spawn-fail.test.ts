// A terminal whose start fails after node-pty has forked (its read stream of the PTY master
// could not be made): the runner says so and lives on, and the shell that did start is ended.
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

describe.each(modes)("a terminal that fails after its fork (sandbox %s)", (mode) => {
  let ws: Awaited<ReturnType<typeof tempWorkspace>>;
  const RealReadStream = tty.ReadStream;
  beforeAll(async () => (ws = await tempWorkspace()));
  afterAll(() => ws.cleanup());
  afterEach(() => {
    tty.ReadStream = RealReadStream;
  });

  it("is refused with node-pty's error, the process survives its exit, and its shell is killed", async () => {
    // A shell that outlives its terminal's master unless something kills it.
    const token = `${60 + Math.random()}`.slice(0, 9);
    const shell = join(ws.dir, "shell.sh");
    await writeFile(shell, `#!/bin/sh\ntrap '' HUP\nexec sleep ${token}\n`);
    await chmod(shell, 0o755);
    const sent: RunnerToServer[] = [];
    const manager = new PtyManager({
      workspaceRoot: ws.dir,
      sandbox: sandboxInfo(mode),
      env: scrubEnv({ ...process.env }),
      send: (m) => (sent.push(m), true),
      shell,
    });
    // node-pty reads `tty.ReadStream` when it constructs, after the fork: the next one fails.
    tty.ReadStream = function () {
      tty.ReadStream = RealReadStream;
      throw new Error("TTY initialization failed: uv_tty_init returned EBADF (bad file descriptor)");
    } as unknown as typeof tty.ReadStream;
    const crashes: unknown[] = [];
    const onCrash = (e: unknown) => crashes.push(e);
    process.on("uncaughtException", onCrash);
    try {
      manager.handle({ type: "pty.open", ptyId: "f1", sessionId: "s1", cols: 80, rows: 24 });
      const deadline = Date.now() + 10_000;
      while (!sent.some((m) => m.type === "pty.exit") && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 20));
      expect(sent.find((m) => m.type === "pty.exit")).toMatchObject({
        ptyId: "f1",
        exitCode: null,
        signal: expect.stringContaining("failed to start: TTY initialization failed"),
      });
      // The shell that started is killed; its exit reaches node-pty, whose 200 ms timer must not throw.
      expect(await settledProcesses(token, 5_000)).toEqual([]);
      await new Promise((r) => setTimeout(r, 500));
      expect(crashes).toEqual([]);
      // The manager still starts terminals.
      tty.ReadStream = RealReadStream;
      expect(await processesMatching(token)).toEqual([]);
      manager.handle({ type: "pty.open", ptyId: "f2", sessionId: "s1", cols: 80, rows: 24 });
      const second = Date.now() + 10_000;
      while (manager.size === 0 && Date.now() < second) await new Promise((r) => setTimeout(r, 20));
      expect(manager.size).toBe(1);
    } finally {
      process.off("uncaughtException", onCrash);
      await manager.dispose();
    }
  });
});
