// Input for a terminal whose PTY master was just closed never reaches the file that reuses the
// master's descriptor number: the runner opens files all the time (the workspace's, git's), and
// the lowest free number is the one the master had.
import { closeSync, openSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as nodePty from "node-pty";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PtyInput } from "./pty-input";

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
