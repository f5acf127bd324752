// Test harness (tests only): the processes of a workspace's watch server (workspace/watch-server.ts
// under bubblewrap): every process whose command line names the server and the folder, and of
// those the server itself (the Node process, not its bwrap).
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";

export function watchServers(dir: string): number[] {
  try {
    return execFileSync("pgrep", ["-f", `watch-server.*${dir}`])
      .toString()
      .trim()
      .split("\n")
      .map(Number);
  } catch {
    return [];
  }
}

export const watchServerNode = (dir: string): number | undefined =>
  watchServers(dir).find((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, "utf8").startsWith(process.execPath);
    } catch {
      return false;
    }
  });
