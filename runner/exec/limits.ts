// Resource limits for what the agent and the person run: memory, processes, CPU time and file
// size, per command and per terminal (QUIVER_LIMIT_MEMORY, QUIVER_LIMIT_PROCESSES,
// QUIVER_LIMIT_CPU_SECONDS, QUIVER_LIMIT_FILE_SIZE; 0 turns one off).
//
// Memory and processes are bounded by a cgroup where one can be made (v1 memory and pids
// hierarchies, or a v2 tree with those controllers), created under the runner's own cgroup so an
// outer limit still holds. A process joins its cgroup before it execs anything (a `sh` wrapper
// writes its own pid into cgroup.procs, then execs the real argv), so nothing it starts escapes.
// Without cgroups memory falls back to RLIMIT_DATA per process (writable private memory; not
// RLIMIT_AS, which counts mere reservations: WebAssembly in Node fails under 4 GiB of it) and
// processes are not bounded: RLIMIT_NPROC counts every process of the user on the host
// (all of root's, for a root runner). CPU time and file size are rlimits either way (`prlimit`,
// per process, inherited); a command cannot raise a hard limit (in the sandbox not even as root).
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { findOnPath } from "./sandbox";
import { pidAlive } from "../pid-alive";

export interface Limits {
  /** Bytes of memory; 0 = none. */
  memoryBytes: number;
  /** Processes (and threads) at once; 0 = none. */
  processes: number;
  /** CPU seconds per process; 0 = none. */
  cpuSeconds: number;
  /** Largest file a process may write, bytes; 0 = none. */
  fileBytes: number;
}

const GIB = 1024 ** 3;
// CPU time per process, threads summed: 4 h lets a 10-minute build on 24 busy threads through and
// a terminal's dev server at 10% run 40 h, and still ends a process left spinning.
export const DEFAULT_LIMITS: Limits = {
  memoryBytes: 4 * GIB,
  processes: 1024,
  cpuSeconds: 4 * 3600,
  fileBytes: 2 * GIB,
};

const UNITS: Record<string, number> = { "": 1, k: 1024, m: 1024 ** 2, g: GIB, t: 1024 ** 4 };

/** "4g", "256m", "512k", a plain byte count, or 0 for none. */
export function parseSize(name: string, value: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?\s*$/i.exec(value);
  if (!m) throw new Error(`${name} must be a size such as 4g, 256m or 0 for none (got ${JSON.stringify(value)})`);
  return Math.floor(Number(m[1]) * UNITS[m[2].toLowerCase()]);
}

function parseCount(name: string, value: string): number {
  if (!/^\d+$/.test(value.trim()))
    throw new Error(`${name} must be a whole number, 0 for none (got ${JSON.stringify(value)})`);
  return Number(value);
}

export function limitsFromEnv(env: Record<string, string | undefined> = process.env): Limits {
  const pick = <T>(name: string, parse: (n: string, v: string) => T, fallback: T) =>
    env[name] ? parse(name, env[name]!) : fallback;
  return {
    memoryBytes: pick("QUIVER_LIMIT_MEMORY", parseSize, DEFAULT_LIMITS.memoryBytes),
    processes: pick("QUIVER_LIMIT_PROCESSES", parseCount, DEFAULT_LIMITS.processes),
    cpuSeconds: pick("QUIVER_LIMIT_CPU_SECONDS", parseCount, DEFAULT_LIMITS.cpuSeconds),
    fileBytes: pick("QUIVER_LIMIT_FILE_SIZE", parseSize, DEFAULT_LIMITS.fileBytes),
  };
}

/** 4 GiB, 256 MiB, 1.5 GiB: how limits are named in messages. */
export function formatBytes(n: number): string {
  for (const [unit, size] of [
    ["TiB", 1024 ** 4],
    ["GiB", GIB],
    ["MiB", 1024 ** 2],
    ["KiB", 1024],
  ] as const) {
    if (n >= size) return `${Number((n / size).toFixed(1))} ${unit}`;
  }
  return `${n} bytes`;
}

/** Counters of a cgroup that say a limit was hit. */
export interface JailCounts {
  oomKills: number;
  forksRefused: number;
}

/** One cgroup (a directory per controller hierarchy) holding a command, terminal or sandbox. */
export class Jail {
  constructor(
    readonly dirs: { memory?: string; pids?: string },
    private readonly v2: boolean,
    readonly limits: Limits,
  ) {}

  /** argv that joins this cgroup, then execs `argv`. */
  wrap(argv: string[]): string[] {
    const procs = [...new Set(Object.values(this.dirs))].map((d) => join(d!, "cgroup.procs"));
    if (procs.length === 0) return argv;
    // $$ is the wrapper's pid, which exec keeps: the command is in the cgroup from its first instruction.
    const script = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 126; shift; done; shift; exec "$@"';
    return ["/bin/sh", "-c", script, "quiver-limits", ...procs, "--", ...argv];
  }

  counts(): JailCounts {
    const read = (dir: string | undefined, file: string, key: string) => {
      if (!dir) return 0;
      try {
        return Number(new RegExp(`^${key} (\\d+)`, "m").exec(readFileSync(join(dir, file), "utf8"))?.[1] ?? 0);
      } catch {
        return 0;
      }
    };
    return {
      oomKills: read(this.dirs.memory, this.v2 ? "memory.events" : "memory.oom_control", "oom_kill"),
      forksRefused: read(this.dirs.pids, "pids.events", "max"),
    };
  }

  /** What the command's reader must know about the limits it hit since `before` (empty when none). */
  report(before: JailCounts = { oomKills: 0, forksRefused: 0 }): string {
    const now = this.counts();
    const notes: string[] = [];
    if (now.oomKills > before.oomKills)
      notes.push(`killed: memory limit ${formatBytes(this.limits.memoryBytes)} reached (QUIVER_LIMIT_MEMORY)`);
    const refused = now.forksRefused - before.forksRefused;
    if (refused > 0)
      notes.push(
        `process limit ${this.limits.processes} reached: ${refused} fork${refused === 1 ? "" : "s"} refused (QUIVER_LIMIT_PROCESSES)`,
      );
    return notes.join("\n");
  }

  /** Removes the cgroup once it is empty (waits briefly for dying processes to leave). */
  async dispose(): Promise<void> {
    for (const dir of new Set(Object.values(this.dirs))) {
      for (let i = 0; i < 100; i++) {
        try {
          rmdirSync(dir!);
          break;
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === "ENOENT") break;
          await new Promise((r) => setTimeout(r, 50));
        }
      }
    }
  }
}

interface Hierarchy {
  v2: boolean;
  /** The runner's own cgroup directory per controller, where ours are made. */
  memory?: string;
  pids?: string;
}

let hierarchy: Hierarchy | null | undefined;

/** The cgroup directories this runner may make children in, or null without usable cgroups. */
function findHierarchy(): Hierarchy | null {
  if (hierarchy !== undefined) return hierarchy;
  hierarchy = null;
  let own: string;
  try {
    own = readFileSync("/proc/self/cgroup", "utf8");
  } catch {
    return null;
  }
  const path = (controller: string) =>
    own
      .split("\n")
      .find((l) => l.split(":")[1]?.split(",").includes(controller))
      ?.split(":")[2];
  const v1 = (controller: string) => {
    const p = path(controller);
    const dir = p === undefined ? undefined : join("/sys/fs/cgroup", controller, p);
    return dir && existsSync(join(dir, "cgroup.procs")) ? dir : undefined;
  };
  const candidate: Hierarchy = { v2: false, memory: v1("memory"), pids: v1("pids") };
  if (!candidate.memory && !candidate.pids) {
    // A v2 tree: our processes' cgroup cannot also hold controlled children ("no internal
    // processes"), so ours go beside it, under its parent, where the controllers are enabled.
    const p = own
      .split("\n")
      .find((l) => l.startsWith("0::"))
      ?.slice(3);
    const base = existsSync("/sys/fs/cgroup/cgroup.controllers") ? "/sys/fs/cgroup" : "/sys/fs/cgroup/unified";
    if (p === undefined) return null;
    const parent = join(base, p, "..");
    let controllers = "";
    try {
      controllers = readFileSync(join(parent, "cgroup.subtree_control"), "utf8");
    } catch {
      return null;
    }
    const words = controllers.trim().split(/\s+/);
    if (!words.includes("memory") && !words.includes("pids")) return null;
    Object.assign(candidate, {
      v2: true,
      memory: words.includes("memory") ? parent : undefined,
      pids: words.includes("pids") ? parent : undefined,
    });
  }
  for (const dir of new Set([candidate.memory, candidate.pids])) if (dir) sweepStale(dir);
  // Only a hierarchy we can actually make a child in counts.
  try {
    const probe = new Jails(candidate).make("probe", { ...DEFAULT_LIMITS });
    void probe.dispose();
  } catch {
    return null;
  }
  return (hierarchy = candidate);
}

/** Removes the empty cgroups of runners that are gone (a `kill -9` leaves its cgroups behind). */
function sweepStale(dir: string): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = Number(/^quiver-(\d+)-/.exec(name)?.[1]);
    if (!pid || pid === process.pid || pidAlive(pid)) continue;
    tryRmdir(join(dir, name)); // refused while a process is still in it
  }
}

class Jails {
  constructor(private readonly h: Hierarchy) {}

  make(label: string, limits: Limits): Jail {
    const name = `quiver-${process.pid}-${label}-${randomBytes(4).toString("hex")}`;
    const dirs: { memory?: string; pids?: string } = {};
    const { h } = this;
    const made: string[] = [];
    try {
      if (h.memory && limits.memoryBytes > 0) {
        dirs.memory = join(h.memory, name);
        mkdirSync(dirs.memory);
        made.push(dirs.memory);
        if (h.v2) writeFileSync(join(dirs.memory, "memory.max"), String(limits.memoryBytes));
        else writeFileSync(join(dirs.memory, "memory.limit_in_bytes"), String(limits.memoryBytes));
        // Swap would only slow the limit down: the same bound on memory + swap where it exists.
        if (h.v2) tryWrite(join(dirs.memory, "memory.swap.max"), "0");
        else tryWrite(join(dirs.memory, "memory.memsw.limit_in_bytes"), String(limits.memoryBytes));
      }
      if (h.pids && limits.processes > 0) {
        dirs.pids = h.v2 && dirs.memory ? dirs.memory : join(h.pids, name);
        if (!made.includes(dirs.pids)) {
          mkdirSync(dirs.pids);
          made.push(dirs.pids);
        }
        writeFileSync(join(dirs.pids, "pids.max"), String(limits.processes));
      }
    } catch (err) {
      for (const dir of made.reverse()) tryRmdir(dir);
      throw err;
    }
    return new Jail(dirs, h.v2, limits);
  }
}

function tryWrite(file: string, value: string): void {
  try {
    writeFileSync(file, value);
  } catch {
    /* optional knob absent here */
  }
}

function tryRmdir(dir: string): void {
  try {
    rmdirSync(dir);
  } catch {
    /* already gone */
  }
}

/**
 * A cgroup for one command, terminal or sandbox, or undefined where cgroups cannot be used (or
 * neither memory nor processes is limited): the caller then relies on rlimits alone.
 */
export function makeJail(label: string, limits: Limits): Jail | undefined {
  if (limits.memoryBytes <= 0 && limits.processes <= 0) return undefined;
  const h = findHierarchy();
  if (!h) return undefined;
  try {
    return new Jails(h).make(label, limits);
  } catch {
    return undefined;
  }
}

/** Whether memory and processes are bounded by cgroups here (for the log and the tests). */
export function cgroupsUsable(): boolean {
  return findHierarchy() !== null;
}

/**
 * argv that makes the process the OOM killer's first choice, then execs the rest: in a warm
 * sandbox every command shares one cgroup with the exec server, the largest process there, which
 * the kernel took when a command filled the memory with pages no process maps (a memfd), and every
 * command of the workspace died with it. The score is set by the process itself before its exec
 * (util-linux's `choom`), so nothing it forks starts lower: written from outside after the spawn
 * it raced the command's first fork. Not a `sh -c` wrapper: dash drops exported bash functions
 * from the environment it passes on. This guards against accidents (a test run out of memory
 * taking the dev server with it), not a command bent on it: it may lower its score back to the
 * exec server's (anything down to what a privileged process last set, 0), and then only its own
 * workspace's commands die with the server; commands in a cgroup apart from the server's would
 * guard against that too.
 */
export function oomFirstPrefix(): string[] {
  const choom = findOnPath("choom");
  return choom ? [choom, "-n", "1000", "--"] : [];
}

/**
 * The `prlimit` prefix for the rlimits of one command or terminal: CPU time and file size, and
 * data size for memory when no cgroup bounds it. Empty when prlimit is missing or nothing applies.
 */
export function rlimitPrefix(limits: Limits, memoryByCgroup: boolean): string[] {
  const prlimit = findOnPath("prlimit");
  if (!prlimit) return [];
  const flags: string[] = [];
  // SIGXCPU at the soft limit says why; the hard one, a little later, is SIGKILL for a process that ignores it.
  if (limits.cpuSeconds > 0) flags.push(`--cpu=${limits.cpuSeconds}:${limits.cpuSeconds + 5}`);
  if (limits.fileBytes > 0) flags.push(`--fsize=${limits.fileBytes}`);
  if (limits.memoryBytes > 0 && !memoryByCgroup) flags.push(`--data=${limits.memoryBytes}`);
  return flags.length > 0 ? [prlimit, ...flags, "--"] : [];
}
