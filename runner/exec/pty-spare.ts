// Which terminal makes room for a new one at the runner's limit (pty.ts makeRoom): only one no
// page shows; of those, one at a shell prompt before one running a program, in its foreground or
// as a job left in the background (a dev server or a build left running in a tab since closed,
// `npm run dev &`), and then the one unseen longest. Whether a program runs is read when the
// terminal stops being shown. Nothing types into an unseen terminal, so the reading can only go
// stale by that program ending, which keeps a terminal longer, never shorter.
import { readFile } from "node:fs/promises";
import { findMarked } from "./kill";

export interface SpareCandidate {
  /** Since when no page shows it; absent: one does, and it is never taken. */
  unwatchedAt?: number;
  /** A program other than a shell held its foreground when it was last left unseen. */
  runsProgram?: boolean;
}

const SHELLS = new Set(["bash", "sh", "dash", "zsh", "fish", "ksh", "mksh", "tcsh", "csh"]);

/** The terminal to close for a new one, or undefined when every one is shown. */
export function pickSpare<T extends SpareCandidate>(live: Iterable<T>): T | undefined {
  let spare: T | undefined;
  for (const e of live) if (e.unwatchedAt !== undefined && (!spare || before(e, spare))) spare = e;
  return spare;
}

/** Whether `a` makes room before `b` (both unseen). */
function before(a: SpareCandidate, b: SpareCandidate): boolean {
  const busy = Number(Boolean(a.runsProgram)) - Number(Boolean(b.runsProgram));
  return busy !== 0 ? busy < 0 : (a.unwatchedAt ?? Infinity) < (b.unwatchedAt ?? Infinity);
}

/**
 * Whether a program other than a shell runs in the terminal whose processes carry `marker`
 * (kill.ts): a process with no child of its own that is not a shell. At a bare prompt the only
 * such process is the shell itself, under its wrappers (bwrap, unshare); a program in the
 * foreground or a background job (`sleep 9 &`, `(cmd &)` orphaned to the sandbox's init) is one.
 * False when it cannot be told.
 */
export async function runsProgram(marker: string): Promise<boolean> {
  const found = await Promise.all((await findMarked(marker)).map(processOf));
  const live = found.filter((p): p is TerminalProcess => p !== undefined && p.state !== "Z");
  const parents = new Set(live.map((p) => p.ppid));
  return live.some((p) => !parents.has(p.pid) && !SHELLS.has(p.name));
}

interface TerminalProcess {
  pid: number;
  ppid: number;
  state: string;
  name: string;
}

async function processOf(pid: number): Promise<TerminalProcess | undefined> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => "");
  const open = stat.indexOf("(");
  const close = stat.lastIndexOf(")");
  if (open < 0 || close < open) return undefined;
  // The name in parentheses may hold spaces and parentheses: the fields start after the last ')'.
  const [state, ppid] = stat.slice(close + 2).split(" ");
  return { pid, ppid: Number(ppid), state: state ?? "", name: stat.slice(open + 1, close) };
}
