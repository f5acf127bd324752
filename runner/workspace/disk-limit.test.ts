// The workspace disk limit on real folders: a runner file op and a real shell command (dd,
// fallocate, in the sandbox when bubblewrap is here) past a small limit both fail naming the
// limit, and the workspace is usable again once files are deleted. Kernel: a loop-mounted ext4
// image (root and loop devices; skipped where the machine cannot mount one). Measured: the
// runner's own count, which refuses file ops and tells a command that passed the limit.
import { execFileSync } from "node:child_process";
import { unlinkSync, writeFileSync } from "node:fs";
import { mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ShellResultMeta } from "../../server/protocol/exec-ops";
import { scrubEnv } from "../exec/env";
import { sandboxInfo } from "../exec/sandbox";
import { ShellService } from "../exec/shell";
import { longestStall } from "../testing/event-loop";
import { opContext } from "../testing/exec";
import { defineOp } from "../ops";
import { kernelLimitsAvailable, mountImage, unmountImage } from "./disk-image";
import { DiskLimit } from "./disk-limit";
import { withDiskNotice } from "./disk-limit-ops";
import { Workspace } from "./workspace";

const MB = 1024 ** 2;
let base: string;
beforeAll(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), "quiver-disk-")));
});
afterAll(() => rm(base, { recursive: true, force: true }));

async function setUp(name: string, limitBytes: number, kernel: boolean) {
  const dir = join(base, name);
  await import("node:fs/promises").then((fs) => fs.mkdir(dir));
  if (kernel) mountImage(dir, `${dir}.img`, limitBytes);
  const workspace = await Workspace.open(dir, { watch: false });
  const limit = new DiskLimit(() => workspace.files.cwd, { limitBytes, kernel, measureEveryMs: 0 });
  workspace.files.writeGuard = limit.guardFor(workspace.files);
  const shell = new ShellService({
    sandbox: sandboxInfo("auto"),
    env: scrubEnv({ ...process.env, HOME: base }),
    allowNetwork: false,
  });
  const op = withDiskNotice(defineOp({ input: shell.op.input, run: (i, ctx) => shell.run(i, ctx) }), () => limit);
  const sh = async (command: string) => {
    const r = await op.run({ command }, opContext(workspace));
    return { output: r.output, exitCode: ShellResultMeta.parse(r.meta).exitCode };
  };
  const dispose = () => {
    shell.dispose();
    workspace.dispose();
    if (kernel) unmountImage(dir, `${dir}.img`);
  };
  return { workspace, limit, sh, dispose };
}

const refusal = (err: unknown) => (err as Error).message;

describe.skipIf(!kernelLimitsAvailable(tmpdir()))("kernel limit (loop-mounted image)", () => {
  it("dd and fallocate past 32 MB fail naming the limit, a file op too; deleting makes room again", async () => {
    const w = await setUp("kernel", 32 * MB, true);
    try {
      const dd = await w.sh("dd if=/dev/zero of=big bs=1M count=48 status=none; echo exit=$?");
      expect(dd.output).toMatch(/No space left on device/);
      expect(dd.output).toMatch(/\[quiver\] the workspace's disk limit of 32 MB is reached/);
      // Full at about the limit, not at 48 MB.
      expect(w.limit.usage()).toBeGreaterThan(28 * MB);
      expect(w.limit.usage()).toBeLessThanOrEqual(32 * MB);
      const op = await w.workspace.files.writeFile("more.bin", Buffer.alloc(2 * MB, 1)).catch(refusal);
      expect(op).toMatch(/the workspace's disk limit of 32 MB is reached .*; delete files to make room/);
      const fa = await w.sh("rm big; fallocate -l 40M huge; echo exit=$?");
      expect(fa.output).toMatch(/fallocate: .*No space left on device/);
      expect(fa.output).toMatch(/exit=1/);
      await w.sh("rm -f huge big");
      await w.workspace.files.writeFile("more.bin", Buffer.alloc(2 * MB, 1));
      const ok = await w.sh("dd if=/dev/zero of=ok bs=1M count=8 status=none && echo wrote");
      expect(ok.output).toBe("wrote\n");
    } finally {
      w.dispose();
    }
  }, 60_000);
});

describe("measured limit", () => {
  it("a file op past 4 MB is refused naming the limit; a command that passes it is told; deleting makes room", async () => {
    const w = await setUp("measured", 4 * MB, false);
    try {
      await w.workspace.files.writeFile("a.bin", Buffer.alloc(3 * MB, 1));
      expect(await w.workspace.files.writeFile("b.bin", Buffer.alloc(2 * MB, 1)).catch(refusal)).toMatch(
        /the workspace's disk limit of 4 MB is reached \(3(\.\d)? MB used, 2 MB more asked\)/,
      );
      // Rewriting a file no larger than before is never refused.
      await w.workspace.files.writeFile("a.bin", Buffer.alloc(3 * MB, 2));
      const dd = await w.sh("dd if=/dev/zero of=c.bin bs=1M count=2 status=none; echo done");
      expect(dd.output).toMatch(/done\n\[quiver\] the workspace's disk limit of 4 MB is reached/);
      expect(await w.workspace.files.writeFile("d.txt", "x".repeat(10_000)).catch(refusal)).toMatch(
        /disk limit of 4 MB/,
      );
      await w.sh("rm c.bin");
      await w.workspace.files.writeFile("d.txt", "x".repeat(10_000));
      expect((await w.sh("echo fine")).output).toBe("fine\n");
    } finally {
      w.dispose();
    }
  }, 60_000);

  it("empty files count a block each: they take inodes, which a count of blocks alone let run out", async () => {
    const w = await setUp("inodes", 8 * MB, false);
    try {
      // 3,000 empty files: 0 bytes by their blocks (the count said about 100 KB), 12 MB by their inodes.
      const touched = await w.sh("mkdir e && cd e && seq 1 3000 | xargs touch; echo done");
      expect(touched.output).toMatch(/done\n\[quiver\] the workspace's disk limit of 8 MB is reached/);
      expect(await w.workspace.files.writeFile("x.txt", "x").catch(refusal)).toMatch(/disk limit of 8 MB is reached/);
      await w.sh("rm -r e");
      await w.workspace.files.writeFile("x.txt", "x");
    } finally {
      w.dispose();
    }
  }, 60_000);

  it("a folder deeper than the count goes, with anything in it, leaves no room until it is deleted", async () => {
    const w = await setUp("deep", 64 * MB, false);
    try {
      // 40 MB under 300 levels: the count stops at 256 and saw only the folders (about 1 MB).
      const deep = await w.sh(
        `p=d; for i in $(seq 1 300); do p=$p/d; done; mkdir -p $p && head -c ${40 * MB} /dev/zero > $p/big && echo made`,
      );
      expect(deep.output).toMatch(
        /made\n\[quiver\] the workspace's disk limit of 64 MB cannot be kept: a folder more than 256 levels deep/,
      );
      expect(await w.workspace.files.writeFile("y.txt", "y").catch(refusal)).toMatch(/more than 256 levels deep/);
      // Even its folders alone are more than the count can see: it goes whole, then room is back.
      await w.sh("rm -r d");
      await w.workspace.files.writeFile("y.txt", "y");
    } finally {
      w.dispose();
    }
  }, 60_000);
});

describe("the measured count", () => {
  it("is walked once for all who ask while a walk runs; a recent one is reused, an old one walked again", async () => {
    const w = await setUp("shared", 64 * MB, false);
    try {
      await w.workspace.files.writeFile("a.bin", Buffer.alloc(1 * MB, 1));
      const asked = Array.from({ length: 10 }, () => w.limit.measure());
      // The first starts a walk; the nine asked during it share the one walk after it.
      expect(new Set(asked).size).toBe(2);
      const counts = await Promise.all(asked);
      expect(new Set(counts).size).toBe(1);
      expect(counts[0]).toBeGreaterThanOrEqual(1 * MB);
      // Written and removed behind the runner's back: only a walk sees it.
      writeFileSync(join(base, "shared", "b.bin"), Buffer.alloc(2 * MB, 1));
      await w.limit.measure();
      const walked = w.limit.usage();
      expect(walked).toBeGreaterThanOrEqual(3 * MB);
      unlinkSync(join(base, "shared", "b.bin"));
      expect(await w.limit.recent(60_000)).toBe(walked);
      await new Promise((r) => setTimeout(r, 5));
      expect(await w.limit.recent(0)).toBeLessThan(walked - MB);
    } finally {
      w.dispose();
    }
  });
});

describe("measured limit on a big workspace (60,000 files)", () => {
  it("a command's notice and the count's walk leave the event loop turning; the count is du's", async () => {
    const w = await setUp("big", 4 * 1024 * MB, false);
    try {
      await w.sh(
        "mkdir -p d/e && ln -s / d/root && for i in $(seq 0 59); do mkdir f$i && (cd f$i && touch $(seq 1 1000)); done",
      );
      await w.sh("head -c 300000 /dev/urandom > d/e/blob && ln d/e/blob d/hard");
      const first = await longestStall(() => w.limit.measure());
      const command = await longestStall(() => w.sh("echo done"));
      expect(command.value.output).toBe("done\n");
      const again = await longestStall(() => w.limit.measure());
      // The old synchronous walk held the loop 0.4–0.8 s here on every command.
      expect(Math.max(first.stallMs, command.stallMs, again.stallMs)).toBeLessThan(250);
      // du's blocks, each inode once, but at least a block an entry (the 60,000 empty files).
      const dir = join(base, "big");
      const inodes = new Map<string, number>();
      for (const line of execFileSync("find", [dir, "-mindepth", "1", "-printf", "%i %b\n"], {
        encoding: "utf8",
        maxBuffer: 64 * MB,
      })
        .trim()
        .split("\n")) {
        const [ino, blocks] = line.split(" ");
        inodes.set(ino, Math.max(Number(blocks) * 512, 4096));
      }
      expect(again.value).toBe([...inodes.values()].reduce((a, b) => a + b, 0));
    } finally {
      w.dispose();
    }
  }, 120_000);
});
