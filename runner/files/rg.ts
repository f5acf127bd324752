// Runs ripgrep (the @vscode/ripgrep binary, else the system `rg`) with bounded output: stops
// reading and kills rg once enough lines have arrived.
import { spawn } from "node:child_process";
import { access } from "node:fs/promises";

let binary: Promise<string> | undefined;

export function rgBinary(): Promise<string> {
  return (binary ??= (async () => {
    try {
      const { rgPath } = await import("@vscode/ripgrep");
      await access(rgPath);
      return rgPath;
    } catch {
      return "rg";
    }
  })());
}

/** Flags every file op passes: dotfiles included, .git excluded, .gitignore honoured even outside a repo. */
export const RG_COMMON = ["--no-config", "--color", "never", "--hidden", "--no-require-git", "-g", "!.git/"];

export interface RgOutput {
  lines: string[];
  truncated: boolean;
  /** 0 found, 1 nothing found, 2 error (null when killed after enough lines). */
  code: number | null;
  stderr: string;
}

/** `keep`: only the lines it accepts are collected and counted. */
export async function runRg(args: string[], opts: { cwd: string; signal: AbortSignal; maxLines: number; keep?: (line: string) => boolean }): Promise<RgOutput> {
  const rg = await rgBinary();
  return new Promise((resolve, reject) => {
    const child = spawn(rg, args, { cwd: opts.cwd, stdio: ["ignore", "pipe", "pipe"] });
    const lines: string[] = [];
    let rest = "";
    let stderr = "";
    let truncated = false;
    const onAbort = () => child.kill("SIGKILL");
    opts.signal.addEventListener("abort", onAbort, { once: true });
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      if (truncated) return;
      const parts = (rest + chunk).split("\n");
      rest = parts.pop() ?? "";
      for (const line of parts) {
        if (opts.keep && !opts.keep(line)) continue;
        if (lines.length >= opts.maxLines) {
          truncated = true;
          child.kill("SIGKILL");
          return;
        }
        lines.push(line);
      }
    });
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (c: string) => {
      if (stderr.length < 4000) stderr += c;
    });
    child.on("error", (err) => {
      opts.signal.removeEventListener("abort", onAbort);
      reject(new Error(`could not run ripgrep: ${err.message}`));
    });
    child.on("close", (code) => {
      opts.signal.removeEventListener("abort", onAbort);
      if (!truncated && rest && (!opts.keep || opts.keep(rest))) {
        if (lines.length >= opts.maxLines) truncated = true;
        else lines.push(rest);
      }
      if (opts.signal.aborted) return reject(new Error("cancelled"));
      resolve({ lines, truncated, code: truncated ? null : code, stderr: stderr.trim() });
    });
  });
}
