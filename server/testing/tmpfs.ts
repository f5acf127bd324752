// A small tmpfs for fault tests: a real disk that fills up (a big file written into it) and can
// be remounted read-only. Mounting needs root; where it is refused the caller skips and says why.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A tmpfs of `size` at a fresh folder, or undefined (with the reason) where mounting is refused. */
export function mountTmpfs(size: string): { dir: string; remount(opts: string): void; unmount(): void } | string {
  const dir = mkdtempSync(join(tmpdir(), "quiver-fault-"));
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", `size=${size}`, "tmpfs", dir], { stdio: "pipe" });
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    return `cannot mount a tmpfs here (${String((err as { stderr?: Buffer }).stderr ?? err).trim()}): the disk-full and read-only tests need root`;
  }
  return {
    dir,
    remount: (opts) => execFileSync("mount", ["-o", `remount,${opts}`, dir], { stdio: "pipe" }),
    unmount: () => {
      execFileSync("umount", ["-l", dir], { stdio: "pipe" });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

let probed: string | undefined | null = null;
/** Why tmpfs cannot be mounted here (undefined: it can). Checked once, mounting and unmounting
 *  a probe, so a test file decides what to skip when it is collected and mounts its own disk in
 *  beforeAll (a mount made at load would outlive a run that filters the file's tests out). */
export function tmpfsRefusal(): string | undefined {
  if (probed === null) {
    const m = mountTmpfs("64k");
    probed = typeof m === "string" ? m : undefined;
    if (typeof m !== "string") m.unmount();
  }
  return probed;
}
