// Which terminal makes room for a new one at the runner's limit (pty.ts makeRoom): only one no
// page shows; of those, one at a shell prompt before one whose foreground is a program (a dev
// server or a build left running in a tab since closed), and then the one unseen longest.
// Whether a program holds the foreground is read when the terminal stops being shown. Nothing
// types into an unseen terminal, so the reading can only go stale by that program ending, which
// keeps a terminal longer, never shorter.
import { readFile } from "node:fs/promises";
import { foregroundGroup } from "./pty-interrupt";

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

/** Whether a program other than a shell holds the foreground of the terminal whose session
 *  leader is `leader` (false when it cannot be told). */
export async function runsProgram(leader: number): Promise<boolean> {
  const group = await foregroundGroup(leader);
  if (group === undefined) return false;
  const name = (await readFile(`/proc/${group}/comm`, "utf8").catch(() => "")).trim();
  return name !== "" && !SHELLS.has(name);
}
