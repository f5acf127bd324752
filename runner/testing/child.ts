// Test helper: an ES module run in a node process of its own (through tsx, from the repository's
// root), its stdout and stderr gathered, so that a test can SIGKILL it at a chosen moment and
// look at what a runner killed there leaves behind.
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository's root, for `import` lines of the child's code. */
export const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));

export interface ScriptChild {
  p: ChildProcess;
  /** Resolves when the process has exited (however it ended). */
  exited: Promise<void>;
  /** What it printed so far, stdout and stderr together. */
  out(): string;
}

/** Writes `code` to a fresh `.mts` file in `folder` and runs it with `args`. */
export function runScript(folder: string, code: string, args: readonly string[]): ScriptChild {
  const file = join(folder, `child-${randomBytes(4).toString("hex")}.mts`);
  writeFileSync(file, code);
  const p = spawn(process.execPath, ["--import", "tsx", file, ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  p.stdout!.on("data", (b: Buffer) => (out += b.toString()));
  p.stderr!.on("data", (b: Buffer) => (out += b.toString()));
  const exited = new Promise<void>((r) => p.once("exit", () => r()));
  return { p, exited, out: () => out };
}
