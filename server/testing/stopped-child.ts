// A real server-side process for the crash tests: a child script that does real work against a
// real database and, at the moment a test wants it killed, prints a line `stopped …` and waits
// (services/*-crash-child.ts). The test then kills it -9, as a crash would.
import { spawn } from "node:child_process";
import { join } from "node:path";

export interface StoppedChild {
  /** What it printed up to the stop. */
  out: string;
  /** SIGKILL, then its exit. */
  kill9(): Promise<void>;
}

/**
 * Runs `script` (a path from the repository's root, under tsx) with `args` until it prints the
 * whole line `said`; a `stopped` line other than that one, or an exit, fails it.
 */
export async function runUntilStopped(
  script: string,
  args: string[],
  said = "stopped",
  env: NodeJS.ProcessEnv = process.env,
): Promise<StoppedChild> {
  const child = spawn(process.execPath, ["--import", "tsx", script, ...args], {
    cwd: join(import.meta.dirname, "../.."),
    stdio: ["ignore", "pipe", "pipe"],
    env,
  });
  let out = "";
  let err = "";
  child.stderr!.on("data", (d) => (err += d));
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  const kill9 = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await exited;
  };
  try {
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on("data", (d) => {
        out += d;
        // Whole lines only: a chunk may end inside one.
        const lines = out.slice(0, out.lastIndexOf("\n") + 1).split("\n");
        if (lines.includes(said)) resolve();
        else if (lines.some((l) => l.startsWith("stopped"))) reject(new Error(`stopped elsewhere: ${out}`));
      });
      child.once("exit", (code) => reject(new Error(`child exited ${code}: ${out}\n${err}`)));
    });
  } catch (e) {
    await kill9();
    throw e;
  }
  return { out, kill9 };
}
