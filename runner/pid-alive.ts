// Whether a process id names a live process, for the runner's leftovers of dead processes (key
// temps, per-process cgroups): EPERM means alive but another user's. A pid alone is reused once
// its process is gone, so what must outlive a kill -9 names its writer by `processMark`: the pid
// with the process's start time (/proc/<pid>/stat field 22) and the boot it started in, which no
// later process has, and its PID namespace: a runner in another container sharing a folder is
// not judged by this one's /proc.
import { lstatSync, readdirSync, readFileSync, readlinkSync, rmSync } from "node:fs";
import { join } from "node:path";

export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** `<pid>-<start ticks>-<boot id, 32 hex>-<PID namespace>` of a process of this PID namespace,
 *  or undefined without /proc. */
export function processMark(pid = process.pid): string | undefined {
  const start = startOf(pid);
  const boot = bootId();
  const ns = pidNamespace();
  return start !== undefined && boot !== undefined && ns !== undefined ? `${pid}-${start}-${boot}-${ns}` : undefined;
}

/** A whole mark `processMark` makes. */
export const FULL_MARK_PATTERN = String.raw`\d+-\d+-[0-9a-f]{32}-\d+`;
/** A whole mark, or a bare pid (written where there was no /proc). */
export const MARK_PATTERN = String.raw`\d+(?:-\d+-[0-9a-f]{32}-\d+)?`;

/** Whether the process a mark (or a bare pid) names still runs: a reused pid, or a pid of an
 *  earlier boot, is not it. A mark of another PID namespace cannot be judged from here, nor a
 *  bare pid whose /proc is unreadable: both count as running (kept, not removed). */
export function markAlive(mark: string): boolean {
  const [pid, start, boot, ns] = mark.split("-");
  if (start === undefined || boot === undefined) return pidAlive(Number(pid));
  if (ns !== undefined && ns !== pidNamespace()) return true;
  const now = bootId();
  if (now !== undefined && now !== boot) return false;
  let stat: string;
  try {
    stat = readFileSync(`/proc/${Number(pid)}/stat`, "utf8");
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "ENOENT" ? false : pidAlive(Number(pid));
  }
  return startField(stat) === start;
}

/**
 * Removes what processes now gone left in `dir` (killed -9: no exit handler ran): the entries
 * whose names `owned` matches with the writer's mark as its first group, of this user only, and
 * only of the `kind` expected there. A live writer's, or another PID namespace's, is kept.
 */
export function removeLeftoversOfDead(dir: string, owned: RegExp, kind: "file" | "folder"): string[] {
  const removed: string[] = [];
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return removed;
  }
  for (const name of names) {
    const m = owned.exec(name);
    if (!m || markAlive(m[1])) continue;
    const path = join(dir, name);
    try {
      const st = lstatSync(path);
      if (!(kind === "file" ? st.isFile() : st.isDirectory()) || st.uid !== process.getuid?.()) continue;
      rmSync(path, { recursive: kind === "folder", force: true });
      removed.push(path);
    } catch {
      /* gone already, or not ours to remove */
    }
  }
  return removed;
}

function startOf(pid: number): string | undefined {
  try {
    return startField(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return undefined;
  }
}

// "pid (comm) S ppid …": the command name may hold spaces and ")", so fields count from the last ")".
const startField = (stat: string) => stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];

let boot: string | undefined | null = null;
function bootId(): string | undefined {
  if (boot === null) {
    try {
      boot = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim().replace(/-/g, "");
      if (!/^[0-9a-f]{32}$/.test(boot)) boot = undefined;
    } catch {
      boot = undefined;
    }
  }
  return boot;
}

let namespace: string | undefined | null = null;
function pidNamespace(): string | undefined {
  if (namespace === null) {
    try {
      namespace = /^pid:\[(\d+)\]$/.exec(readlinkSync("/proc/self/ns/pid"))?.[1];
    } catch {
      namespace = undefined;
    }
  }
  return namespace;
}
