// Test helpers for runner/exec: a real workspace on a temp dir, an OpContext around it, and a
// /proc scan that finds processes left behind.
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { OpContext } from "../ops";
import { PtyManager, type PtyOptions } from "../exec/pty";
import { Workspace } from "../workspace/workspace";

export async function tempWorkspace(): Promise<{ workspace: Workspace; dir: string; cleanup(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), "quiver-exec-"));
  const workspace = await Workspace.open(dir, { watch: false });
  return { workspace, dir: workspace.root, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

export function opContext(
  workspace: Workspace,
  opts: { sessionId?: string; signal?: AbortSignal; progress?: (c: string) => void } = {},
): OpContext {
  return {
    sessionId: opts.sessionId ?? "s1",
    workspace,
    signal: opts.signal ?? new AbortController().signal,
    deadline: Date.now() + 600_000,
    progress: opts.progress ?? (() => {}),
    filesChanged: () => {},
  };
}

/** Pids whose command line contains `needle` (zombies excluded: they hold nothing). */
export async function processesMatching(needle: string): Promise<number[]> {
  const found: number[] = [];
  for (const name of await readdir("/proc")) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const cmdline = (await readFile(`/proc/${name}/cmdline`)).toString().replace(/\0/g, " ");
      const status = await readFile(`/proc/${name}/status`, "utf8");
      if (cmdline.includes(needle) && !/^State:\s+Z/m.test(status)) found.push(Number(name));
    } catch {
      /* gone */
    }
  }
  return found;
}

/** Waits until no process matches `needle` (kills are asynchronous), up to `ms`. */
export async function settledProcesses(needle: string, ms = 3000): Promise<number[]> {
  const until = Date.now() + ms;
  for (;;) {
    const left = await processesMatching(needle);
    if (left.length === 0 || Date.now() > until) return left;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A PtyManager whose terminals' output is gathered as one screen of text. */
export function screenPtys(o: Omit<PtyOptions, "send">): { ptys: PtyManager; screen(): string } {
  let screen = "";
  const ptys = new PtyManager({
    ...o,
    send: (m) => {
      if (m.type === "pty.data") screen += m.data;
      return true;
    },
  });
  return { ptys, screen: () => screen };
}
