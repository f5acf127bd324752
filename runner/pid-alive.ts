// Whether a process id names a live process, for the runner's leftovers of dead processes (key
// temps, per-process cgroups): EPERM means alive but another user's.

export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}
