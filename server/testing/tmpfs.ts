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

