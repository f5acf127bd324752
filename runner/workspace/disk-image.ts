// The kernel's way to hold a workspace to its disk limit: the workspace folder is an ext4 file
// system of its own, an image file (sparse: it takes only what is written) loop-mounted on the
// folder. Writes past it fail with ENOSPC for everyone — the runner's file ops, the agent's
// commands, terminals — with no measuring and no window. Needs root (mount, loop devices);
// kernelLimitsAvailable() says whether this machine allows it, else the limit is measured
// (disk-limit.ts). The image lives beside the folder, never inside it, so nothing in the
// workspace can reach or grow it.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, rmdirSync, rmSync } from "node:fs";

const run = (cmd: string, args: string[]) =>
  execFileSync(cmd, args, { stdio: ["ignore", "pipe", "pipe"], timeout: 60_000 }).toString();

/**
 * ext4's own metadata takes a few per cent (inode tables 1.6%, a journal of 4-64 MB): the image is
 * that much larger, so files get about the limit (within a few MB either way).
 */
export const imageBytesFor = (limitBytes: number) => limitBytes + Math.ceil(limitBytes * 0.03) + 4 * 1024 ** 2;

let available: boolean | undefined;
/** Root, loop devices and mkfs.ext4 here (probed once by mounting a small image). */
export function kernelLimitsAvailable(probeDir: string): boolean {
  if (available !== undefined) return available;
  if (process.getuid?.() !== 0 || !existsSync("/dev/loop-control")) return (available = false);
  const dir = `${probeDir}/.quiver-disk-probe-${process.pid}`;
  try {
    run("mkdir", ["-p", dir]);
    mountImage(dir, `${dir}.img`, 8 * 1024 ** 2);
    unmountImage(dir, `${dir}.img`);
    available = true;
  } catch {
    available = false;
  }
  rmSync(dir, { recursive: true, force: true });
  rmSync(`${dir}.img`, { force: true });
  return available;
}

/** True when `dir` is a mount point (a workspace whose image is mounted). */
export function isMounted(dir: string): boolean {
  return readFileSync("/proc/self/mountinfo", "utf8")
    .split("\n")
    .some((l) => l.split(" ")[4] === dir);
}

/**
 * Makes `image` (when missing) an ext4 file system holding `limitBytes` and mounts it on `dir`
 * (an empty folder). Files in it belong to `owner` (the runner's user). Mounting again after a
 * reboot finds the files as they were.
 */
export function mountImage(
  dir: string,
  image: string,
  limitBytes: number,
  owner = { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 },
): void {
  if (isMounted(dir)) return;
  if (!existsSync(image)) {
    run("truncate", ["-s", String(imageBytesFor(limitBytes)), image]);
    // -m 0: no blocks kept back for root; the runner's commands may run as root inside the sandbox.
    run("mkfs.ext4", ["-q", "-F", "-m", "0", "-E", `root_owner=${owner.uid}:${owner.gid},nodiscard`, image]);
  }
  // An image still attached (a sandbox's copy of an earlier mount) is mounted from that same
  // device: mount reuses a loop device whose file, offset and size match.
  run("mount", ["-o", "loop,nodev,nosuid", image, dir]);
  try {
    rmdirSync(`${dir}/lost+found`);
  } catch {
    /* already gone, or fsck put something there: leave it */
  }
}

/**
 * The loop devices `image` is attached to. A sandbox made while the image was mounted keeps a copy
 * of the mount (bubblewrap's root is a recursive bind of the host's), so the device can outlive an
 * unmount here until those sandboxes end.
 */
export function loopsOf(image: string): string[] {
  return run("losetup", ["-n", "-O", "NAME", "-j", image])
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);
}

/** Grows an image that is not mounted to a new limit (checked first, as resize2fs asks). */
export function growImageOffline(image: string, limitBytes: number): void {
  if (loopsOf(image).length > 0) throw new Error(`${image} is still in use`);
  run("truncate", ["-s", `>${imageBytesFor(limitBytes)}`, image]);
  try {
    run("e2fsck", ["-f", "-y", image]);
  } catch (err) {
    // 1: errors found and corrected; anything else leaves the file system as it was.
    if ((err as { status?: number }).status !== 1) throw err;
  }
  run("resize2fs", [image]);
}

/** Grows a mounted image to a new limit (ext4 grows online where the kernel lets this process
 *  resize: a container without CAP_SYS_RESOURCE may not; see growImageOffline). */
export function growImage(dir: string, image: string, limitBytes: number): void {
  run("truncate", ["-s", `>${imageBytesFor(limitBytes)}`, image]);
  const device = run("findmnt", ["-n", "-o", "SOURCE", "--target", dir]).trim();
  run("losetup", ["-c", device]);
  run("resize2fs", [device]);
}

/** Unmounts `dir` when an image is mounted there (lazily when a process still holds it); keeps the image. */
export function unmount(dir: string): void {
  if (!isMounted(dir)) return;
  try {
    run("umount", [dir]);
  } catch {
    run("umount", ["-l", dir]);
  }
}

/** Unmounts `dir` and deletes its image. */
export function unmountImage(dir: string, image: string): void {
  unmount(dir);
  rmSync(image, { force: true });
}
