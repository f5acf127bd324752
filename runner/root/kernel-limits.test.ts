// `--disk-limits kernel`: a --root workspace made with a disk limit is an ext4 image of its own,
// loop-mounted on its folder, so a command writing past the limit gets ENOSPC from the kernel and
// the host's disk never holds more than the limit for it. A real runner process, real images and
// mounts, a real `kill -9`; skipped where the machine allows no loop mounts (not root, no
// /dev/loop-control).
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { sandboxInfo } from "../exec/sandbox";
import { isMounted, kernelLimitsAvailable, mountImage } from "../workspace/disk-image";
import { FakeServer, outsideTmp, spawnRootRunner, type RootRunner } from "../testing/root";

vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });

const MB = 1024 * 1024;
/** Whether this process may resize a mounted ext4 (CAP_SYS_RESOURCE, bit 24 of the effective set). */
const canResizeInUse = () =>
  (BigInt(`0x${/^CapEff:\s*([0-9a-f]+)/m.exec(readFileSync("/proc/self/status", "utf8"))![1]}`) >> 24n) & 1n
    ? true
    : false;
const kernel = process.getuid?.() === 0 && existsSync("/dev/loop-control") && kernelLimitsAvailable("/var/tmp");

describe.runIf(sandboxInfo("auto").available && kernel)("--disk-limits kernel", () => {
  let server: FakeServer;
  let runner: RootRunner;
  let root: string;
  let url: string;
  const start = () => spawnRootRunner(url, ["--root", root, "--disk-limits", "kernel"]);
  const restart = async (how: "SIGTERM" | "SIGKILL") => {
    const before = server.frames.length;
    runner.child.kill(how);
    await runner.exited;
    // A clean stop lets go of the mounts; a kill -9 leaves them (the next runner uses them as they are).
    expect(isMounted(`${root}/w`)).toBe(how === "SIGKILL");
    runner = start();
    await server.hello(before);
  };
  const used = (id: string) =>
    server.request("workspace.usage", { workspaceId: id }).then((r) => JSON.parse(r.output).bytesUsed as number);

  beforeAll(async () => {
    root = await outsideTmp("quiver-kernel-limit-");
    server = new FakeServer();
    url = await server.listen();
    runner = start();
    await server.hello();
  });
  afterAll(async () => {
    await runner?.stop();
    await server?.close();
    // A failed test may leave mounts behind: let go of them before removing the folder.
    for (const name of existsSync(root) ? readdirSync(root) : []) {
      if (isMounted(`${root}/${name}`)) execFileSync("umount", ["-l", `${root}/${name}`]);
    }
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it("holds a command to the limit with ENOSPC; raised, grows; kept across a stop and a kill -9", async () => {
    const made = await server.request("workspace.create", {
      workspaceId: "w",
      source: { kind: "empty" },
      diskLimitBytes: 32 * MB,
    });
    expect(made.ok, made.output).toBe(true);
    expect(isMounted(`${root}/w`)).toBe(true);
    expect(existsSync(`${root}/.images/w.img`)).toBe(true);

    const dd = await server.shell("w", "dd if=/dev/zero of=big bs=1M count=64 status=none; echo exit=$?");
    expect(dd).toMatch(/No space left on device/);
    expect(dd).toMatch(/exit=1/);
    expect(dd).toMatch(/disk limit of 32 MB is reached/);
    // The kernel stopped it at the limit, not after: never 64 MB on the host's disk.
    expect(await used("w")).toBeLessThanOrEqual(32 * MB);
    expect(await used("w")).toBeGreaterThan(24 * MB);

    // Raised: the image grows in use where the kernel lets the runner resize (CAP_SYS_RESOURCE);
    // without it (a container like this one may be) it grows before its next mount, and until
    // then the old size holds (images.test.ts covers that growth).
    const raised = await server.request("workspace.limit", { workspaceId: "w", diskLimitBytes: 96 * MB });
    expect(raised.ok, raised.output).toBe(true);
    expect(JSON.parse(raised.output)).toMatchObject({ diskLimitBytes: 96 * MB });
    const more = await server.shell("w", "rm big; dd if=/dev/zero of=big bs=1M count=48 status=none; echo exit=$?");
    if (canResizeInUse()) expect(more).toMatch(/^exit=0/);
    else {
      expect(more).toMatch(/No space left on device/);
      expect(readFileSync(`${root}/.images/w.want`, "utf8").trim()).toBe(String(96 * MB));
    }
    await server.shell("w", "rm -f big; dd if=/dev/zero of=big bs=1M count=20 status=none; echo kept > note.txt");

    // The next runner mounts it again (its hello counts the workspace's bytes).
    await restart("SIGTERM");
    expect(await server.shell("w", "cat note.txt")).toMatch(/^kept/);
    expect(isMounted(`${root}/w`)).toBe(true);
    await restart("SIGKILL");
    expect(await server.shell("w", "cat note.txt; stat -c %s big")).toMatch(/^kept\n20971520/);
    expect(await server.shell("w", "dd if=/dev/zero of=more bs=1M count=128 status=none; echo exit=$?")).toMatch(
      /No space left on device/,
    );
  });

  it("deleted, leaves no mount, image or folder; a workspace made without a limit has no image", async () => {
    expect(
      (
        await server.request("workspace.create", {
          workspaceId: "gone",
          source: { kind: "empty" },
          diskLimitBytes: 8 * MB,
        })
      ).ok,
    ).toBe(true);
    await server.shell("gone", "echo x > f");
    const deleted = await server.request("workspace.delete", { workspaceId: "gone" });
    expect(JSON.parse(deleted.output)).toMatchObject({ existed: true });
    expect(isMounted(`${root}/gone`)).toBe(false);
    expect(existsSync(`${root}/gone`)).toBe(false);
    expect(existsSync(`${root}/.images/gone.img`)).toBe(false);

    expect((await server.request("workspace.create", { workspaceId: "free", source: { kind: "empty" } })).ok).toBe(
      true,
    );
    expect(isMounted(`${root}/free`)).toBe(false);
    expect(existsSync(`${root}/.images/free.img`)).toBe(false);
  });

  it("at start, removes what a killed create or delete left: a mounted staging folder, images with no workspace", async () => {
    await runner.stop();
    // A create killed mid-fill: its staging folder with its image mounted and half filled.
    mkdirSync(`${root}/.new-half-0123456789ab`);
    mountImage(`${root}/.new-half-0123456789ab`, `${root}/.images/.new-half-0123456789ab.img`, 8 * MB);
    writeFileSync(`${root}/.new-half-0123456789ab/partial`, "x");
    // A create killed after naming the image, and a delete killed after removing the folder.
    writeFileSync(`${root}/.images/orphan.img`, "");
    const before = server.frames.length;
    runner = start();
    const hello = await server.hello(before);
    expect(isMounted(`${root}/.new-half-0123456789ab`)).toBe(false);
    expect(existsSync(`${root}/.new-half-0123456789ab`)).toBe(false);
    expect(
      readdirSync(`${root}/.images`)
        .filter((n) => !n.startsWith("w."))
        .sort(),
    ).toEqual([]);
    expect(hello.workspaces?.map((w) => w.id).sort()).toEqual(["free", "w"]);
  });

  it("refuses a kernel limit it cannot give, and a bad mode, before serving", async () => {
    const bad = spawnRootRunner(url, ["--root", root, "--disk-limits", "quota"]);
    expect(await bad.exited).toBe(2);
    expect(bad.stderr()).toMatch(/--disk-limits is measured or kernel/);
    const noRoot = spawnRootRunner(url, ["--workspace", root, "--disk-limits", "kernel"]);
    expect(await noRoot.exited).toBe(2);
    expect(noRoot.stderr()).toMatch(/--disk-limits kernel needs --root/);
  });
});
