// Where commands run: inside bubblewrap when it is installed and works (workspace writable, the
// rest read-only, private /tmp, own PID namespace, no network unless granted and then the
// workspace's namespace without the host's loopback (netns.ts), dies with the runner), else
// directly with a report that the runner is unsandboxed.
import { spawnSync } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";
import type { RunnerSandbox } from "../../server/protocol/runner";
import { coverArgs, hostSockets } from "./host-sockets";

export type SandboxMode = "auto" | "off" | "require";

export interface SandboxInfo extends RunnerSandbox {
  /** Absolute path of bwrap when kind is "bubblewrap". */
  bwrap?: string;
  /** Why the sandbox is unavailable, for logs and the UI. */
  reason?: string;
}

export interface SandboxSpec {
  /** Absolute real path of the workspace root (bound writable). */
  workspace: string;
  /** Working directory inside the workspace. */
  cwd: string;
  network: boolean;
  /**
   * With network: the argv prefix that enters the workspace's network namespace (netns.ts) before
   * bubblewrap starts. Network without it is the host's (only by explicit choice).
   */
  enter?: string[];
  /** With `enter`: a resolv.conf bound at `at` (the host's own names a resolver on its loopback). */
  resolvConf?: { file: string; at: string };
  /** setsid inside the sandbox: right for commands, wrong for a PTY that needs its terminal. */
  newSession: boolean;
  /** Folders bound read-only over the private /tmp: Quiver's own code, when it lives under /tmp. */
  readOnly?: string[];
}

export function findOnPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      /* keep looking */
    }
  }
  return undefined;
}

const probes = new Map<SandboxMode, SandboxInfo>();

/**
 * Whether commands will be sandboxed, probed once per mode: bwrap can be installed and still
 * fail (no user namespaces in a container), so it is tried for real.
 */
export function sandboxInfo(mode: SandboxMode = "auto"): SandboxInfo {
  const cached = probes.get(mode);
  if (cached) return cached;
  const info = probe(mode);
  if (mode === "require" && !info.available) {
    throw new Error(`sandbox required but unavailable: ${info.reason ?? "unknown reason"}`);
  }
  probes.set(mode, info);
  return info;
}

function probe(mode: SandboxMode): SandboxInfo {
  if (mode === "off") return { available: false, kind: "none", reason: "disabled by configuration" };
  if (process.platform !== "linux") return { available: false, kind: "none", reason: `not supported on ${process.platform}` };
  const bwrap = findOnPath("bwrap");
  if (!bwrap) return { available: false, kind: "none", reason: "bubblewrap (bwrap) is not installed" };
  const args = bwrapArgs(bwrap, { workspace: "/tmp", cwd: "/tmp", network: false, newSession: true }, ["true"]).args;
  const r = spawnSync(bwrap, args, { stdio: ["ignore", "ignore", "pipe"], timeout: 10_000 });
  if (r.status !== 0) {
    const why = r.error?.message ?? (r.stderr?.toString().trim() || `exit ${r.status ?? r.signal}`);
    return { available: false, kind: "none", reason: `bwrap does not work here: ${why}` };
  }
  return { available: true, kind: "bubblewrap", bwrap };
}

/** The bwrap command line that runs `argv` under `spec`. */
export function bwrapArgs(bwrap: string, spec: SandboxSpec, argv: string[]): { file: string; args: string[] } {
  const args = [
    "--ro-bind", "/", "/",
    "--dev", "/dev",
    "--proc", "/proc",
    // /tmp first: the workspace may itself live under /tmp and must stay visible.
    "--tmpfs", "/tmp",
    ...(spec.readOnly ?? []).flatMap((dir) => ["--ro-bind", dir, dir]),
    "--bind", spec.workspace, spec.workspace,
    // The host's Unix sockets still connect through a read-only bind: each is covered (host-sockets.ts).
    ...coverArgs(hostSockets([spec.workspace])),
    // A user namespace even when the runner is root: capabilities then hold only inside it and the
    // mounts above stay locked, so `mount -o remount,rw /` fails instead of undoing the sandbox.
    "--unshare-user",
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--die-with-parent",
  ];
  if (!spec.network) args.push("--unshare-net");
  if (spec.newSession) args.push("--new-session");
  // Entered as root of the namespace's user namespace (a runner that is not root): its own uid inside.
  if (spec.network && spec.enter?.length) {
    args.push("--uid", String(process.getuid?.() ?? 0), "--gid", String(process.getgid?.() ?? 0));
    if (spec.resolvConf) args.push("--ro-bind", spec.resolvConf.file, spec.resolvConf.at);
  }
  args.push("--chdir", spec.cwd, "--", ...argv);
  if (spec.network && spec.enter?.length) return { file: spec.enter[0], args: [...spec.enter.slice(1), bwrap, ...args] };
  return { file: bwrap, args };
}

/** argv wrapped for the sandbox when there is one, unchanged otherwise. */
export function sandboxed(info: SandboxInfo, spec: SandboxSpec, argv: string[]): { file: string; args: string[] } {
  if (info.available && info.bwrap) return bwrapArgs(info.bwrap, spec, argv);
  return { file: argv[0], args: argv.slice(1) };
}

/** Caches of package managers point into the private /tmp: $HOME is read-only in the sandbox. */
export const SANDBOX_ENV: Record<string, string> = {
  XDG_CACHE_HOME: "/tmp/.cache",
  npm_config_cache: "/tmp/.npm",
};
