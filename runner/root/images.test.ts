// A --root workspace's image (--disk-limits kernel) on a real loop mount: a raise the kernel will
// not apply in use is kept and applied before the next mount; the kernel holds the limit only
// while the image was made for it; a mount that another sandbox's copy keeps attached is mounted
// again from the same device. Skipped where the machine allows no loop mounts.
import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync, statfsSync, writeFileSync } from "node:fs";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isMounted, kernelLimitsAvailable, loopsOf } from "../workspace/disk-image";
import { outsideTmp } from "../testing/root";
import { WorkspaceImages } from "./images";

const MB = 1024 * 1024;
const kernel = process.getuid?.() === 0 && kernelLimitsAvailable("/var/tmp");
/** What the file system under `dir` holds in all, in MB (ext4's own metadata left out). */
const sizeMb = (dir: string) => {
  const s = statfsSync(dir);
  return (s.blocks * s.bsize) / MB;
};

describe.runIf(kernel)("workspace images", () => {
  let root: string;
  let images: WorkspaceImages;
  beforeEach(async () => {
    root = await outsideTmp("quiver-images-");
    images = new WorkspaceImages(root);
  });
  afterEach(() => {
    for (const name of ["w", ".new-w-1"])
      if (isMounted(`${root}/${name}`)) execFileSync("umount", ["-l", `${root}/${name}`]);
    rmSync(root, { recursive: true, force: true });
  });

  /** Workspace w made as store.ts makes it: filled in a mounted staging folder, then settled. */
  const make = (limitBytes: number) => {
    mkdirSync(`${root}/.new-w-1`);
    const image = images.mountForFill(".new-w-1", limitBytes);
    writeFileSync(`${root}/.new-w-1/file`, "kept");
    images.settle(".new-w-1", image, "w", limitBytes);
    execFileSync("mv", [`${root}/.new-w-1`, `${root}/w`]);
    images.ensureMounted("w");
  };

  it("holds the limit it was made for; grows for a higher one, at once or before its next mount", (ctx) => {
    make(16 * MB);
    expect(isMounted(`${root}/w`)).toBe(true);
    expect(images.holds("w", 16 * MB)).toBe(true);
    expect(images.holds("w", 8 * MB)).toBe(false); // a lower limit is measured
    expect(images.grow("w", 8 * MB)).toBe("grown"); // and never shrinks the image
    expect(sizeMb(`${root}/w`)).toBeLessThan(20);

    const raised = images.grow("w", 48 * MB);
    if (raised === "pending") {
      // Not resizable in use here: the old size holds until the next mount.
      expect(images.holds("w", 48 * MB)).toBe(false);
      expect(sizeMb(`${root}/w`)).toBeLessThan(20);
      images.unmount("w");
      if (loopsOf(images.imageOf("w")).length > 0)
        return ctx.skip("another sandbox on this machine keeps the image attached");
      images.ensureMounted("w");
    }
    expect(images.holds("w", 48 * MB)).toBe(true);
    expect(sizeMb(`${root}/w`)).toBeGreaterThan(40);
    expect(execFileSync("cat", [`${root}/w/file`]).toString()).toBe("kept");
  });

  it("mounts an image still attached elsewhere from that device, the same file system", () => {
    make(16 * MB);
    // A sandbox made while it was mounted keeps a copy: the device stays attached after the unmount here.
    const holder = execFileSync("bash", ["-c", `unshare -m --propagation private sleep 30 >/dev/null 2>&1 & echo $!`])
      .toString()
      .trim();
    try {
      execFileSync("sleep", ["0.3"]);
      images.unmount("w");
      expect(isMounted(`${root}/w`)).toBe(false);
      const [device] = loopsOf(images.imageOf("w"));
      expect(device).toMatch(/^\/dev\/loop/);
      images.ensureMounted("w");
      expect(isMounted(`${root}/w`)).toBe(true);
      expect(loopsOf(images.imageOf("w"))).toEqual([device]);
      expect(execFileSync("cat", [`${root}/w/file`]).toString()).toBe("kept");
    } finally {
      process.kill(Number(holder), "SIGKILL");
    }
  });

  it("at start, removes images and records with no workspace folder, and those of killed creates", () => {
    make(16 * MB);
    for (const name of ["gone.img", "gone.limit", "gone.want", ".new-x-2.img", ".gone-y-3.img", "w.limit.tmp"])
      writeFileSync(`${root}/.images/${name}`, "");
    images.sweep(["w"]);
    expect(
      execFileSync("ls", [`${root}/.images`])
        .toString()
        .split("\n")
        .filter(Boolean)
        .sort(),
    ).toEqual(["w.img", "w.limit"]);
  });
});
