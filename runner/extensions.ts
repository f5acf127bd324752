// HOOK for runner/exec and runner/net (owned by the exec engineer; the runner-process engineer
// owns the rest of runner/). main.ts calls loadExtensions() once at start-up and:
//  - registers every extension's `ops` (shell, fetch_url...) in the op registry,
//  - forwards every `pty.*` frame to the first extension's `pty` handler (none: pty.open is
//    answered with pty.exit and exitCode null),
//  - reports the first `sandbox` it finds in hello (none: { available: false, kind: "none" }),
//  - calls `dispose()` of each on shutdown.
// Add your factories to the array below; keep this file a list, not logic.
import type { RunnerExtension, RunnerHost } from "./ops";

// Imported here rather than at the top, so a runner that exits on bad arguments never loads them.
export async function loadExtensions(host: RunnerHost): Promise<RunnerExtension[]> {
  const [{ execExtension }, { netExtension }] = await Promise.all([import("./exec"), import("./net")]);
  return [execExtension(host), netExtension()];
}
