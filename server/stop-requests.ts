// What asks the server process to stop cleanly: Ctrl-C (SIGINT), SIGTERM, the terminal it runs
// in closing (SIGHUP, whose default would end it with no clean stop: the events still in the
// write-behind window lost, running turns left for the next start to recover), and the end of
// the process that started it (`--parent-pid`: the demo, which cannot pass on a SIGKILL of its
// own). A clean stop takes a few seconds; a second request well after the first means "now".
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { EnvError } from "./env";

/** Signals this close to the first are the same one, delivered twice (see watchStopRequests). */
export const REPEAT_MS = 1000;
const SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
const PARENT_POLL_MS = 500;

export interface StopRequests {
  /** Starts the clean stop; called once. */
  stop(why: string): void;
  /** A later request while stopping: exit at once. */
  now(): void;
  parentPid?: number;
  clock?: () => number;
}

/** `--parent-pid N` from the server's arguments, or a clear error. */
export function parentPidArg(argv: readonly string[]): number | undefined {
  const { values } = parseArgs({
    args: [...argv],
    options: { "parent-pid": { type: "string" } },
    strict: false,
    allowPositionals: true,
  });
  const raw = values["parent-pid"];
  if (raw === undefined) return undefined;
  if (typeof raw !== "string" || !/^[1-9]\d*$/.test(raw))
    throw new EnvError(`--parent-pid must be a process id, got ${JSON.stringify(raw)}`);
  return Number(raw);
}

/** True while `pid` runs: a zombie (ended, not yet reaped by its own parent) has ended. */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== "ESRCH";
  }
  try {
    // "pid (comm) S …": the state follows the last ")" (a command name may hold one).
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return true; // no /proc (macOS): the signal's answer stands
  }
}

/** Listens for every request to stop; returns what undoes it (tests). */
export function watchStopRequests(requests: StopRequests): () => void {
  const clock = requests.clock ?? Date.now;
  let firstAt: number | undefined;
  const request = (why: string) => {
    // One Ctrl-C arrives twice: the terminal sends it to the whole process group, and a parent
    // in that group (npm, the demo) forwards its own.
    if (firstAt !== undefined) {
      if (clock() - firstAt > REPEAT_MS) requests.now();
      return;
    }
    firstAt = clock();
    requests.stop(why);
  };
  const handlers = SIGNALS.map((signal) => {
    const handler = () => request(signal);
    process.on(signal, handler);
    return [signal, handler] as const;
  });
  const { parentPid } = requests;
  const watch =
    parentPid === undefined
      ? undefined
      : setInterval(() => {
          if (!running(parentPid)) {
            clearInterval(watch);
            request(`parent process ${parentPid} is gone`);
          }
        }, PARENT_POLL_MS);
  watch?.unref();
  return () => {
    for (const [signal, handler] of handlers) process.off(signal, handler);
    clearInterval(watch);
  };
}
