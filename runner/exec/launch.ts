// How a command gets started. Command (command.ts) talks to a Launcher; there are two:
// WarmLauncher (warm.ts), which hands commands to an exec server already running inside the
// sandbox, and DirectLauncher here, for a runner without a sandbox: `bash -c` spawned by the
// runner itself in its own process group. Both run the login profile once (login-env.ts)
// rather than `bash -lc` per command. Without a PID namespace, a marker in each command's
// environment lets killTree find what left the group (`(sleep &)`, `setsid`).
//
// Unsandboxed commands must still die with the runner, even a `kill -9` of it, or they go on
// changing the workspace after the model was told their outcome is unknown: each starts under
// `setpriv --pdeathsig KILL` (killed when the runner dies) and, where it works, in a PID
// namespace of its own (`unshare --pid --fork --kill-child`), whose end kills everything the
// command started, forked subshells and `setsid` children included. Each also runs in a cgroup
// of its own under the configured limits (limits.ts).
import { spawn, spawnSync } from "node:child_process";
import type { OutputSink, RemoteExit } from "./exec-client";
import { killTree, MARKER_VAR, newMarker } from "./kill";
import { makeJail, rlimitPrefix, type Limits } from "./limits";
import { captureLoginEnv } from "./login-env";
import type { ProcNamespace } from "./procfs";
import { findOnPath } from "./sandbox";

export type { OutputSink, RemoteExit };

/**
 * A non-login, non-interactive bash. --norc because `bash -c` still runs ~/.bashrc when it
 * thinks sshd started it: SSH_CLIENT in the environment, or stdin a socket, which is what a
 * Node "pipe" is (the command shell reads its command from one).
 */
export const BASH_C = ["bash", "--norc", "-c"];

export interface LaunchSpec {
  command: string;
  /** Run this argv itself, no shell between (run_check's declared checks); `command` is then unused. */
  argv?: string[];
  /** Absolute real path of the workspace root. */
  workspace: string;
  cwd: string;
  network: boolean;
  /** Value of QUIVER_EXEC_ID in the command's environment. */
  marker: string;
}

export interface Launched {
  /** Resolves once the command exited, its stragglers are dead and its output is drained. */
  readonly exited: Promise<RemoteExit>;
  /** Kills the command and everything it started; resolves when all of it is gone. */
  kill(): Promise<void>;
}

export interface Launcher {
  readonly sandboxed: boolean;
  launch(spec: LaunchSpec, sink: OutputSink): Promise<Launched>;
  /** Network namespaces its commands run in besides the runner's (each sandbox's own). */
  namespaces?(): Promise<ProcNamespace[]>;
  dispose(): Promise<void>;
}

let tether: string[] | undefined;

/**
 * The argv prefix that ties an unsandboxed command to the runner's life, probed once: the
 * first of (parent-death signal + PID namespace, the same with a user namespace for a runner
 * that is not root, parent-death signal alone) that runs here.
 */
export function directTether(): string[] {
  if (tether) return tether;
  const setpriv = findOnPath("setpriv");
  const unshare = findOnPath("unshare");
  const pdeath = setpriv ? [setpriv, "--pdeathsig", "KILL", "--"] : [];
  // PID 1 of the namespace is a bash that runs the command and passes on its status, so the
  // command itself keeps the signal semantics it has anywhere else (`kill $$`, SIGXCPU). bash,
  // not sh: dash drops exported functions from the environment. --posix: it reads no BASH_ENV;
  // it gives back the shell level it took, so the command's SHLVL is what it would be without it.
  const init = ["bash", "--posix", "--norc", "--noprofile", "-c", 'SHLVL=$((SHLVL - 1)); "$@"; exit $?', "quiver-init"];
  const candidates = unshare
    ? [
        [...pdeath, unshare, "--pid", "--fork", "--kill-child", "--mount-proc", ...init],
        [
          ...pdeath,
          unshare,
          "--user",
          "--map-current-user",
          "--pid",
          "--fork",
          "--kill-child",
          "--mount-proc",
          ...init,
        ],
      ]
    : [];
  if (setpriv) candidates.push(pdeath);
  tether =
    candidates.find(
      (prefix) => spawnSync(prefix[0], [...prefix.slice(1), "true"], { stdio: "ignore", timeout: 10_000 }).status === 0,
    ) ?? [];
  return tether;
}

/**
 * The argv prefix for a terminal: a bash that owns the terminal's session (node-pty makes its
 * child the session leader) outside the command's namespace. Whoever leads a session hangs up
 * its foreground job when it dies, and a shell whose job just ended reads the next line queued
 * on the terminal, so the leader must outlive what runs in it: it ignores the terminal's
 * hang-up, and on the runner's death (its parent-death signal, TERM) or a close (pty.ts) it
 * SIGKILLs the namespace's init (the child of its child: unshare's or bubblewrap's), which
 * takes every process of the namespace at once, and exits only once that child is gone, when
 * nothing is left to hang up. Empty where setpriv is missing.
 */
export function ttyLeader(): string[] {
  const setpriv = findOnPath("setpriv");
  if (!setpriv) return [];
  // The no-op HUP trap (not an ignore) lets the shell inherit the default. `<&0`: a
  // non-interactive bash gives a background job /dev/null, not the terminal, without it; it
  // also starts it with SIGINT and SIGQUIT ignored, which every command of the terminal would
  // inherit (Ctrl+C would stop nothing), so env puts them back to their defaults.
  const script = [
    "trap : HUP",
    `trap 'read -r k < "/proc/$c/task/$c/children"; kill -KILL \${k:-$c} 2>/dev/null' TERM`,
    'env --default-signal=INT,QUIT "$@" <&0 & c=$!',
    'while :; do wait "$c"; s=$?; kill -0 "$c" 2>/dev/null || exit "$s"; done',
  ].join("\n");
  return [setpriv, "--pdeathsig", "TERM", "--", "bash", "--norc", "--noprofile", "-c", script, "quiver-tty"];
}

/**
 * Keeps a terminal's master end open until its leader (ttyLeader) is gone. When the runner dies
 * the kernel closes its master end first and sends the leader its parent-death signal after, so
 * a command blocked reading the terminal got end-of-file and could run what followed it
 * (`read x; touch after`) in the moment before the leader killed its namespace. This process,
 * outside the namespace and not the runner's child for long, holds a copy of the master end
 * until the leader exits, which it does only once the namespace is dead. GNU tail waits on the
 * leader's pid: one process checking it every 50 ms, no fork per check.
 */
export function holdTerminal(masterFd: number, leaderPid: number): void {
  const tail = findOnPath("tail");
  if (!tail) return;
  try {
    spawn(tail, ["-s", "0.05", `--pid=${leaderPid}`, "-f", "/dev/null"], {
      stdio: ["ignore", "ignore", "ignore", masterFd],
      detached: true, // not in the runner's process group, which its server may kill whole
    })
      .on("error", () => {})
      .unref();
  } catch {
    // Without it the terminal is as before: a reader may see end-of-file a moment early.
  }
}

/**
 * argv in its own process group, stdin /dev/null; stragglers found by `marker` die with it.
 * With `limits`, in a cgroup of its own (removed after) under the rlimits; a limit it hit is
 * said in its exit's `error`, which the reader sees after the output.
 */
export function spawnDirect(
  argv: string[],
  cwd: string,
  env: Record<string, string>,
  marker: string,
  sink: OutputSink,
  limits?: Limits,
): Launched {
  const jail = limits && makeJail("cmd", limits);
  const rlimits = limits ? rlimitPrefix(limits, jail?.dirs.memory !== undefined) : [];
  const inner = [...directTether(), ...rlimits, ...argv];
  const full = jail ? jail.wrap(inner) : inner;
  const child = spawn(full[0], full.slice(1), {
    cwd,
    // Next's types make NODE_ENV required on ProcessEnv; a command's environment need not have it.
    env: { ...env, [MARKER_VAR]: marker } as unknown as NodeJS.ProcessEnv,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  child.stdout!.on("data", (c: Buffer) => sink(1, c));
  child.stderr!.on("data", (c: Buffer) => sink(2, c));
  const exited = new Promise<RemoteExit>((resolve) => {
    let exit: { code: number | null; signal: string | null } | undefined;
    child.once("error", (err) => {
      if (child.pid === undefined) resolve({ code: null, signal: null, error: `failed to start: ${err.message}` });
    });
    // Background children keep the pipes open after the command itself exits: they do not
    // outlive it, so kill them, then wait for the pipes to drain.
    child.once("exit", (code, signal) => {
      exit = { code, signal };
      void killTree(child.pid, marker);
    });
    child.once("close", (code, signal) => {
      const note = jail?.report();
      void jail?.dispose();
      resolve({ ...(exit ?? { code, signal }), ...(note ? { error: note } : {}) });
    });
  });
  return {
    exited,
    kill: async () => {
      await killTree(child.pid, marker);
      await exited;
    },
  };
}

export class DirectLauncher implements Launcher {
  readonly sandboxed = false;
  private readonly loginEnv = new Map<string, Promise<Record<string, string>>>();

  constructor(
    private readonly o: {
      env: Record<string, string>;
      envAllow: readonly string[];
      limits?: Limits;
      log(line: string): void;
    },
  ) {}

  async launch(spec: LaunchSpec, sink: OutputSink): Promise<Launched> {
    const env = await this.envFor(spec.workspace);
    return spawnDirect(spec.argv ?? [...BASH_C, spec.command], spec.cwd, env, spec.marker, sink, this.o.limits);
  }

  private envFor(workspace: string): Promise<Record<string, string>> {
    let env = this.loginEnv.get(workspace);
    if (!env) {
      const start = (argv: string[], sink: OutputSink) =>
        Promise.resolve(spawnDirect(argv, workspace, this.o.env, newMarker(), sink));
      env = captureLoginEnv(start, this.o.env, this.o.envAllow, this.o.log);
      this.loginEnv.set(workspace, env);
    }
    return env;
  }

  async dispose(): Promise<void> {
    this.loginEnv.clear();
  }
}
