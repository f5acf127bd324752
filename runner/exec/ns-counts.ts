// Bounds on what one sandbox may take of counts the kernel keeps per user for the whole host:
// namespaces of each kind (about 96,000 of each here) and inotify instances (128) and watches.
// Inside its user namespace a command may make nested ones, and a sandbox made 2,000 user
// namespaces in 35 s: past the host's count no sandbox of any workspace could start, and one
// holding every inotify instance left other workspaces' file watchers deaf. Each of these counts
// is also kept per user namespace, checked at every level up, and settable by a process with
// CAP_SYS_RESOURCE in that namespace (/proc/sys/user/*). The runner owns the sandbox's namespace,
// so it enters it (`nsenter --user`, which gives it every capability there) and writes the
// bounds, before the exec server is asked to run anything. Inside, /proc/sys is read-only and
// commands hold no capability, so no command can raise them; a namespace nested deeper is still
// counted against the sandbox's.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { readlink } from "node:fs/promises";
import { inOtherNamespace } from "./procfs";
import { findOnPath } from "./sandbox";

const NAMESPACE_KINDS = ["user", "net", "ipc", "uts", "cgroup", "time"] as const;

/**
 * The bounds for a sandbox running at most `processes` processes (0: unbounded, counted as
 * 1,024), whose commands each get a user namespace of their own when `userPerCommand`.
 */
export function sandboxCounts(processes: number, userPerCommand: boolean, host = hostCount): Record<string, number> {
  const perCommand = processes > 0 ? processes : 1024;
  // Each command has a PID and a mount namespace of its own (warm.ts): those follow the process bound.
  const counts: Record<string, number> = { max_pid_namespaces: perCommand, max_mnt_namespaces: perCommand };
  for (const kind of NAMESPACE_KINDS) counts[`max_${kind}_namespaces`] = 64;
  if (userPerCommand) counts.max_user_namespaces = perCommand;
  // A share of the runner's own: one sandbox cannot use them up for the others. (A workspace can
  // have several sandboxes at once, two warm ones and one per terminal: a bound per workspace
  // would need them all in one namespace of the runner's.)
  counts.max_inotify_instances = Math.max(8, Math.floor(host("max_inotify_instances", 128) / 16));
  counts.max_inotify_watches = Math.max(8192, Math.floor(host("max_inotify_watches", 8192 * 4) / 4));
  counts.max_fanotify_groups = Math.max(4, Math.floor(host("max_fanotify_groups", 128) / 16));
  counts.max_fanotify_marks = Math.max(8192, Math.floor(host("max_fanotify_marks", 8192 * 4) / 4));
  // Written last: a terminal's shell waits until it reads as written (awaitBound).
  const { max_user_namespaces: user, ...rest } = counts;
  return { ...rest, max_user_namespaces: user };
}

function hostCount(name: string, fallback: number): number {
  try {
    return Number(readFileSync(`/proc/sys/user/${name}`, "utf8").trim()) || fallback;
  } catch {
    return fallback;
  }
}

const NO_NAMESPACE = "the sandbox has no user namespace of its own";
/** Set once bounding failed for a reason that will not pass (see awaitBound). */
let cannot: string | undefined;

/**
 * argv that waits (at most 5 s) until the runner has written the sandbox's bounds, then execs
 * the rest: a terminal's login shell starts at once, and its profile could be a file the agent
 * wrote. A new user namespace's bounds read as 2^31-1 until written. Empty where bounding is
 * known to fail, so a terminal does not wait each time for nothing.
 */
export function awaitBound(): string[] {
  if (cannot || !findOnPath("nsenter")) return [];
  const script =
    'i=0; while [ "$(cat /proc/sys/user/max_user_namespaces)" = 2147483647 ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done; exec "$@"';
  return ["/bin/sh", "-c", script, "quiver-bound"];
}

/** boundSandboxCounts for a sandbox just spawned: tries again while it has no namespace yet, at
 *  most 2 s, while `wanted`. */
export async function boundOnceStarted(
  spawned: number,
  counts: Record<string, number>,
  wanted: () => boolean,
): Promise<string | undefined> {
  let why: string | undefined = NO_NAMESPACE;
  for (let attempt = 0; attempt < 20 && wanted() && why === NO_NAMESPACE; attempt++) {
    if (attempt > 0) await new Promise((r) => setTimeout(r, 100));
    why = await boundSandboxCounts(spawned, counts);
  }
  return why;
}

/**
 * Writes `counts` into the user namespace of the sandbox `spawned` started. Answers why it could
 * not (no user namespace of its own, no nsenter, refused), or undefined once written.
 */
export async function boundSandboxCounts(spawned: number, counts: Record<string, number>): Promise<string | undefined> {
  const nsenter = findOnPath("nsenter");
  if (!nsenter) return (cannot = "nsenter is not installed");
  // The deepest, not the nearest: without root, a sandbox with network is started by an nsenter
  // into the workspace's network namespace, whose user namespace is another one, shared by the
  // workspace's sandboxes, one level up. Nothing of the workspace's has run in the sandbox yet.
  const pid = (await inOtherNamespace(spawned, "user", "deepest"))?.pid;
  if (pid === undefined) return NO_NAMESPACE;
  // A count this kernel does not keep (fanotify's before 5.19) is skipped; any other failure stops.
  const script =
    'for kv; do f="/proc/sys/user/${kv%%=*}"; [ -e "$f" ] || continue; echo "${kv#*=}" > "$f" || exit 1; done';
  const pairs = Object.entries(counts).map(([k, v]) => `${k}=${v}`);
  const child = spawn(
    nsenter,
    [`--user=/proc/${pid}/ns/user`, "--preserve-credentials", "--", "/bin/sh", "-c", script, "sh", ...pairs],
    {
      stdio: ["ignore", "ignore", "pipe"],
    },
  );
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((resolve) => {
    child.once("error", () => resolve(-1));
    child.once("close", resolve);
  });
  if (code === 0) return undefined;
  const why = `nsenter failed (${code}): ${stderr.trim().slice(0, 300)}`;
  // Not permitted while the sandbox is still there: it will be every time (a spawn's failure may pass).
  if (
    /not permitted|permission denied/i.test(stderr) &&
    (await readlink(`/proc/${pid}/ns/user`).catch(() => undefined))
  )
    cannot = why;
  return why;
}
