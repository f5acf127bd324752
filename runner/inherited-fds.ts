// Descriptors the runner inherited without close-on-exec (its launcher's pipe, a service
// manager's socket, a CI's log): closed at start. Everything Node opens is close-on-exec, but an
// inherited one would pass to every program the runner starts, and not every one goes through
// the sandbox's own closing prefix (git in the helpers' sandbox is handed its seccomp program on
// a descriptor, so bubblewrap passes on whatever else it is given).
import { closeSync, readdirSync, readFileSync } from "node:fs";

/** Linux's O_CLOEXEC, as /proc/<pid>/fdinfo shows it in `flags` (octal). */
const O_CLOEXEC = 0o2000000;

/** Closes every descriptor above stderr without close-on-exec, but Node's IPC channel's; returns them. */
export function closeInheritedDescriptors(): number[] {
  const keep = new Set([Number(process.env.NODE_CHANNEL_FD ?? -1)]);
  const closed: number[] = [];
  let names: string[];
  try {
    names = readdirSync("/proc/self/fd");
  } catch {
    return closed; // no /proc: nothing to read them from (the runner's file operations need it anyway)
  }
  for (const name of names) {
    const fd = Number(name);
    if (fd <= 2 || keep.has(fd)) continue;
    let flags: number;
    try {
      flags = parseInt(/^flags:\s+([0-7]+)/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, "utf8"))?.[1] ?? "", 8);
    } catch {
      continue; // closed meanwhile (the listing's own)
    }
    if (Number.isNaN(flags) || flags & O_CLOEXEC) continue;
    try {
      closeSync(fd);
      closed.push(fd);
    } catch {
      // gone already
    }
  }
  return closed;
}
