// The runner closes what its launcher left open without close-on-exec, before it starts
// anything: a real runner process started with an open secret file on descriptors 3 and 40.
// (Node itself marks close-on-exec the inherited descriptors from 3 up to the first gap; one
// past a gap, as a service manager's or a CI's, it leaves as it is.)
import { spawn } from "node:child_process";
import { closeSync, openSync, readFileSync, readlinkSync } from "node:fs";
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..");
let dir: string;
beforeEach(async () => (dir = await mkdtemp(join(tmpdir(), "quiver-inherit-"))));
afterEach(() => rm(dir, { recursive: true, force: true }));

/** What the process's descriptors name, and which of them its children would inherit. */
async function openFiles(pid: number): Promise<{ file: string; inherited: boolean }[]> {
  const names = await readdir(`/proc/${pid}/fd`).catch(() => []);
  return names.flatMap((n) => {
    try {
      const flags = parseInt(/^flags:\s+([0-7]+)/m.exec(readFileSync(`/proc/${pid}/fdinfo/${n}`, "utf8"))![1], 8);
      return [{ file: readlinkSync(`/proc/${pid}/fd/${n}`), inherited: (flags & 0o2000000) === 0 }];
    } catch {
      return [];
    }
  });
}

describe("a runner started with descriptors left open", () => {
  it("passes none of them on by the time it tries to connect, and keeps its own", async () => {
    const secret = join(dir, "launcher-secret");
    await writeFile(secret, "FAKE-INHERITED-SECRET");
    const ws = join(dir, "ws");
    await (await import("node:fs/promises")).mkdir(ws);
    const fd = openSync(secret, "r");
    // Nothing listens there: the runner keeps trying, and says so on stderr.
    const child = spawn(
      process.execPath,
      ["--import", "tsx", join(ROOT, "runner/main.ts"), "--server", "ws://127.0.0.1:9/runner", "--workspace", ws],
      {
        cwd: ROOT,
        env: { ...process.env, QUIVER_RUNNER_TOKEN: "t", QUIVER_SANDBOX: "off", HOME: dir },
        stdio: ["ignore", "ignore", "pipe", fd, ...Array<"ignore">(36).fill("ignore"), fd],
      },
    );
    closeSync(fd);
    let err = "";
    child.stderr!.on("data", (c: Buffer) => (err += c.toString()));
    try {
      for (const end = Date.now() + 60_000; !/connect/i.test(err); await new Promise((r) => setTimeout(r, 50)))
        if (Date.now() > end || child.exitCode !== null) throw new Error(`the runner did not try to connect: ${err}`);
      const held = await openFiles(child.pid!);
      expect(held.length).toBeGreaterThan(3); // it runs: Node's own descriptors are there
      expect(held.filter((h) => h.file === secret && h.inherited)).toEqual([]);
    } finally {
      child.kill("SIGKILL");
    }
  }, 90_000);
});
