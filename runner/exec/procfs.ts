// What the runner reads of other processes in /proc: their parent and start time (one process
// over its life, not its number), their network namespace, and the namespace a sandbox of ours
// got. The preview's port list (runner/preview/ports.ts) and the warm sandboxes (warm.ts) share it.
import { readdir, readFile, readlink } from "node:fs/promises";

export interface Proc {
  pid: number;
  ppid: number;
  /** When it started (stat's field 22): with the pid, names this process and not a later one
   *  that reuses its number. */
  start: string;
}

/** A network namespace and a process in it whose /proc/<pid>/net shows it. */
export interface ProcNamespace extends Proc {
  /** `net:[4026532301]`, as /proc/<pid>/ns/net names it. */
  ns: string;
  /** Whose sandbox it is: a command's (the default) or a terminal's (runner/exec/pty.ts). */
  of?: "terminal";
}

export async function stat(pid: number): Promise<Proc | undefined> {
  const line = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => undefined);
  // The command name in parentheses may contain spaces: the fields start after its last ')'
  // (rest[0] is field 3).
  const rest = line?.slice(line.lastIndexOf(")") + 2).split(" ");
  return rest ? { pid, ppid: Number(rest[1]), start: rest[19] } : undefined;
}

export async function processes(): Promise<Proc[]> {
  const pids = (await readdir("/proc").catch(() => [] as string[])).filter((d) => /^\d+$/.test(d)).map(Number);
  return (await Promise.all(pids.map(stat))).filter((p): p is Proc => p !== undefined);
}

/** The network namespace a process is in (`self` for the runner), or undefined once it is gone. */
export const netnsOf = (pid: number | "self") => readlink(`/proc/${pid}/ns/net`).catch(() => undefined);

/** `root`'s descendants among `procs`, nearest first. */
export function descendants(procs: Proc[], root: number): Proc[] {
  const children = new Map<number, Proc[]>();
  for (const p of procs) children.set(p.ppid, [...(children.get(p.ppid) ?? []), p]);
  const found: Proc[] = [];
  const seen = new Set<number>();
  for (let queue = [...(children.get(root) ?? [])]; queue.length;) {
    const p = queue.shift()!;
    if (seen.has(p.pid)) continue;
    seen.add(p.pid);
    found.push(p);
    queue.push(...(children.get(p.pid) ?? []));
  }
  return found;
}

/**
 * The network namespace a sandbox we just started got, read from outside: the nearest
 * descendant of the process we spawned (`bwrap`, which itself stays in ours) that is in another
 * one. Asked before any command runs in the sandbox, so nothing of a command's can stand in.
 */
export function sandboxNamespace(spawned: number): Promise<ProcNamespace | undefined> {
  return inOtherNamespace(spawned, "net", "nearest");
}

/** A descendant of `spawned` (the nearest or the deepest) in another `kind` namespace than ours,
 *  still the process it was when listed. */
export async function inOtherNamespace(
  spawned: number,
  kind: "net" | "user",
  which: "nearest" | "deepest",
): Promise<ProcNamespace | undefined> {
  const nsOf = (pid: number | "self") => readlink(`/proc/${pid}/ns/${kind}`).catch(() => undefined);
  const ours = await nsOf("self");
  const found = descendants(await processes(), spawned);
  for (const p of which === "nearest" ? found : found.reverse()) {
    const ns = await nsOf(p.pid);
    if (ns && ns !== ours && (await stat(p.pid))?.start === p.start) return { ...p, ns };
  }
  return undefined;
}

/** Whether a namespace's process is still the one recorded, and still in it. */
export async function stillIn(n: ProcNamespace): Promise<boolean> {
  return (await netnsOf(n.pid)) === n.ns && (await stat(n.pid))?.start === n.start;
}
