// Ending everything a command started. Each command gets a unique marker variable in its
// environment; after killing its process group, /proc is swept for any process still carrying
// the marker, which catches `(sleep 1000 &)` and `setsid` children that left the group. Inside
// bubblewrap the PID namespace already guarantees this; the sweep is the fallback without it.
import { randomBytes } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";

export const MARKER_VAR = "QUIVER_EXEC_ID";

export function newMarker(): string {
  return randomBytes(12).toString("hex");
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    /* group already gone */
  }
  try {
    process.kill(pid, signal);
  } catch {
    /* leader already gone */
  }
}

/** Whether `environ` holds `entry` as a whole variable, not inside another one's value. */
function holdsEntry(environ: Buffer, entry: Buffer): boolean {
  for (let at = environ.indexOf(entry); at >= 0; at = environ.indexOf(entry, at + 1))
    if (at === 0 || environ[at - 1] === 0) return true;
  return false;
}

/** Pids (other than ours) whose environment carries `marker`; empty where /proc is absent. */
export async function findMarked(marker: string): Promise<number[]> {
  let entries: string[];
  try {
    entries = await readdir("/proc");
  } catch {
    return [];
  }
  const needle = Buffer.from(`${MARKER_VAR}=${marker}\0`);
  const found: number[] = [];
  const pids = entries.filter((name) => /^\d+$/.test(name) && Number(name) !== process.pid);
  // A few at a time: a process's environment can be megabytes, and there may be hundreds.
  const next = async (): Promise<void> => {
    for (let name = pids.pop(); name !== undefined; name = pids.pop()) {
      try {
        if (holdsEntry(await readFile(`/proc/${name}/environ`), needle)) found.push(Number(name));
      } catch {
        /* exited meanwhile, or not ours to read */
      }
    }
  };
  await Promise.all(Array.from({ length: 8 }, next));
  return found;
}

/**
 * SIGKILLs the process group led by `pid`, then sweeps for marked stragglers until none is
 * left (a forking loop can spawn between rounds, hence several). A process caught in the middle
 * of an exec may not show its environment for a moment, so only two empty sweeps a little apart
 * count as none.
 */
export async function killTree(pid: number | undefined, marker: string): Promise<void> {
  if (pid !== undefined) signalGroup(pid, "SIGKILL");
  let empty = 0;
  for (let round = 0; round < 8 && empty < 2; round++) {
    const left = await findMarked(marker);
    if (left.length > 0) {
      empty = 0;
      for (const p of left) signalGroup(p, "SIGKILL");
    } else if (++empty < 2) await new Promise((r) => setTimeout(r, 25));
  }
}
