// Runs ripgrep (the @vscode/ripgrep binary, else the system `rg`) with bounded output: stops
// reading and kills rg once enough lines have arrived. It runs at the workspace root through the
// workspace's helper launcher: in the commands' sandbox when there is one (workspace/helpers.ts).
import { spawn } from "node:child_process";
import { access } from "node:fs/promises";
import { vanishedCover } from "../exec/host-sockets";
import type { Helpers, HelperSpawn } from "../workspace/helpers";

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

type RgOptions = { signal: AbortSignal; maxLines: number; keep?: (line: string) => boolean; records?: RgRecords };

/**
 * How rg's output is cut into records. "lines": at each newline. With `--null` a path may hold a
 * newline (it is the agent's to name), so a record is cut where rg ends it: "paths" (`--files`)
 * at each NUL, "hits" (a search) at the first newline after the NUL that ends its path.
 */
export type RgRecords = "lines" | "paths" | "hits";

/** The whole records at the start of `text`, and what is left of it. */
export function splitRecords(text: string, mode: RgRecords): { records: string[]; rest: string } {
  if (mode !== "hits") {
    const records = text.split(mode === "paths" ? "\0" : "\n");
    const rest = records.pop() ?? "";
    return { records, rest };
  }
  const records: string[] = [];
  let from = 0;
  for (;;) {
    const nul = text.indexOf("\0", from);
    const end = nul < 0 ? -1 : text.indexOf("\n", nul);
    if (end < 0) break;
    records.push(text.slice(from, end));
    from = end + 1;
  }
  return { records, rest: text.slice(from) };
}

/** `keep`: only the lines it accepts are collected and counted. */
export async function runRg(helpers: Helpers, args: string[], opts: RgOptions): Promise<RgOutput> {
  const rg = await rgBinary();
  // The binary may lie in Quiver's install, which the sandbox hides: it is bound in read-only.
  const command = () => helpers.spawn([rg, ...args], {}, { readOnly: rg.startsWith("/") ? [rg] : [] });
  const cmd = command();
  const first = await runOnce(cmd, opts);
  // Once more with a fresh listing when a host socket vanished as the sandbox started (host-sockets.ts).
  return first.code !== 0 && vanishedCover(first.stderr, cmd.args) ? runOnce(command(), opts) : first;
}

function runOnce(cmd: HelperSpawn, opts: RgOptions): Promise<RgOutput> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd.file, cmd.args, { cwd: cmd.cwd, env: cmd.env, stdio: ["ignore", "pipe", "pipe"] });
    const lines: string[] = [];
    let rest = "";
    let stderr = "";
    let truncated = false;
    const onAbort = () => child.kill("SIGKILL");
    opts.signal.addEventListener("abort", onAbort, { once: true });
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      if (truncated) return;
      const split = splitRecords(rest + chunk, opts.records ?? "lines");
      rest = split.rest;
      for (const line of split.records) {
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
      // A search's last line without a path's NUL: rg's note on a binary file it was named.
      if (opts.records === "hits") rest = rest.replace(/\n$/, "");
      if (!truncated && rest && (!opts.keep || opts.keep(rest))) {
        if (lines.length >= opts.maxLines) truncated = true;
        else lines.push(rest);
      }
      if (opts.signal.aborted) return reject(new Error("cancelled"));
      resolve({ lines, truncated, code: truncated ? null : code, stderr: stderr.trim() });
    });
  });
}
