// A terminal whose PTY master node-pty has just closed (its other side gone; its exit comes
// later): neither its input nor a resize reaches what took the master's descriptor number, a
// workspace file or another terminal (the lowest free number is the one the master had), and
// a resize then throws nothing that could take the runner down. And the master is the runner's
// alone: no program started later (an agent's command, another terminal) inherits it.
import { execFileSync } from "node:child_process";
import { closeSync, openSync, readFileSync, readlinkSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as nodePty from "node-pty";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { RunnerToServer } from "../../server/protocol/runner";
import { scrubEnv } from "./env";
import { PtyManager } from "./pty";
import { PtyInput } from "./pty-input";
import { sandboxInfo } from "./sandbox";

let dir: string;
beforeEach(async () => (dir = await mkdtemp(join(tmpdir(), "quiver-ptyin-"))));
afterEach(() => rm(dir, { recursive: true, force: true }));

/** node-pty's read stream of the master, which closes the descriptor when destroyed. */
const socketOf = (pty: nodePty.IPty) =>
  (pty as unknown as { _socket: { destroy(): void; destroyed: boolean } })._socket;

describe("PtyInput once the master is closed", () => {
  it("writes nothing into the file that took the master's number, and reports the input dropped", async () => {
    const pty = nodePty.spawn("sleep", ["30"], { cols: 80, rows: 24 });
    const fd = (pty as unknown as { fd: number }).fd;
    const socket = socketOf(pty);
    let acked = 0;
    const input = new PtyInput(
      fd,
      (n) => (acked += n),
      undefined,
      () => !socket.destroyed,
    );
    // The terminal's other side is gone: node-pty destroys its stream, which closes the master
    // (its 'close' event, which ends the input, comes only later).
    socket.destroy();
    const file = join(dir, "workspace-file.txt");
    const reused = openSync(file, "w");
    try {
      expect(reused).toBe(fd);
      input.write("typed after the close\r");
      await new Promise((r) => setTimeout(r, 200));
      expect(readFileSync(file, "utf8")).toBe("");
      expect(acked).toBe(Buffer.byteLength("typed after the close\r"));
    } finally {
      closeSync(reused);
      pty.kill("SIGKILL");
    }
  });
});

describe("PtyManager once a terminal's master is closed", () => {
  it("sizes neither a file nor the terminal that took its number, and throws nothing", async () => {
    const sent: RunnerToServer[] = [];
    const manager = new PtyManager({
      workspaceRoot: dir,
      sandbox: sandboxInfo("off"),
      env: scrubEnv({ ...process.env, HOME: dir, PS1: "$ " }),
      send: (m) => (sent.push(m), true),
    });
    const output = (id: string) =>
      sent.flatMap((m) => (m.type === "pty.data" && m.ptyId === id ? [m.data] : [])).join("");
    const until = async (check: () => boolean, what: string) => {
      for (const end = Date.now() + 15_000; !check(); await new Promise((r) => setTimeout(r, 20)))
        if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    };
    try {
      manager.handle({ type: "pty.open", ptyId: "A", sessionId: "s", cols: 80, rows: 24 });
      await until(() => manager.pid("A") !== undefined, "A");
      const a = (manager as unknown as { ptys: Map<string, { pty: nodePty.IPty }> }).ptys.get("A")!.pty;
      const fdA = (a as unknown as { fd: number }).fd;
      socketOf(a).destroy(); // as node-pty does on EIO: A's master is closed, its exit still to come
      // A file takes the number: resizing A throws nothing (a throw here would end the runner).
      const file = openSync(join(dir, "notes.txt"), "w");
      try {
        expect(file).toBe(fdA);
        expect(() => manager.handle({ type: "pty.resize", ptyId: "A", cols: 40, rows: 10 })).not.toThrow();
      } finally {
        closeSync(file);
      }
      manager.handle({ type: "pty.open", ptyId: "B", sessionId: "s", cols: 80, rows: 24 });
      await until(() => manager.pid("B") !== undefined, "B");
      const b = (manager as unknown as { ptys: Map<string, { pty: nodePty.IPty }> }).ptys.get("B")!.pty;
      expect((b as unknown as { fd: number }).fd).toBe(fdA);
      manager.handle({ type: "pty.resize", ptyId: "A", cols: 33, rows: 11 });
      manager.handle({ type: "pty.input", ptyId: "B", data: "stty size; echo B-$((1+1))\r" });
      await until(() => output("B").includes("B-2"), "B's answer");
      expect(output("B")).toContain("24 80");
      expect(output("B")).not.toContain("11 33");
    } finally {
      await manager.dispose();
    }
  });
});

describe("a terminal's PTY master", () => {
  it("is inherited by no program the runner starts after it", async () => {
    const manager = new PtyManager({
      workspaceRoot: dir,
      sandbox: sandboxInfo("auto"),
      env: scrubEnv({ ...process.env, HOME: dir }),
      send: () => true,
    });
    try {
      manager.handle({ type: "pty.open", ptyId: "P", sessionId: "s", cols: 80, rows: 24 });
      for (const end = Date.now() + 15_000; manager.pid("P") === undefined; await new Promise((r) => setTimeout(r, 20)))
        if (Date.now() > end) throw new Error("the terminal did not start");
      const pty = (manager as unknown as { ptys: Map<string, { pty: nodePty.IPty }> }).ptys.get("P")!.pty;
      const master = (pty as unknown as { fd: number }).fd;
      expect(readlinkSync(`/proc/self/fd/${master}`)).toBe("/dev/ptmx");
      const fds = execFileSync("bash", ["-c", "ls -l /proc/$$/fd/ || true"], { encoding: "utf8" });
      expect(fds).not.toContain("/dev/ptmx");
      // Writing to the master is typing into the terminal: a child that had it could type there.
      expect(() =>
        execFileSync("bash", ["-c", `printf 'echo injected\\r' > /proc/$$/fd/${master}`], { stdio: "pipe" }),
      ).toThrow();
    } finally {
      await manager.dispose();
    }
  });
});
