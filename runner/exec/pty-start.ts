// How a person's terminal (pty.ts) starts: a login shell in the workspace, inside the same
// sandbox as commands (bubblewrap without setsid, so the shell keeps its terminal), under the
// per-terminal limits (a cgroup jail and rlimits, limits.ts), led by a process outside the
// sandbox that outlives it (launch.ts ttyLeader), with network in the workspace's namespace,
// shared with the agent's commands (netns.ts), its shell started once the runner has bounded
// the sandbox's namespaces and inotify instances (ns-counts.ts). Also what the terminal is told about that start:
// the network it lacks and the limit that killed a process, and the namespace it runs in.
import type { IPty } from "node-pty";
import { constants as osConstants } from "node:os";
import type { RunnerToServer } from "../../server/protocol/runner";
import { killTree, MARKER_VAR, newMarker } from "./kill";
import { directTether, holdTerminal, ttyLeader } from "./launch";
import { makeJail, rlimitPrefix, type Jail, type Limits } from "./limits";
import type { SandboxNetwork, WorkspaceNetwork } from "./netns";
import { awaitBound } from "./ns-counts";
import { sandboxNamespace, type ProcNamespace } from "./procfs";
import { sandboxed, SANDBOX_ENV, type SandboxInfo } from "./sandbox";

export interface PtyOptions {
  workspaceRoot: string;
  /** Sends a frame to the server; false while disconnected. */
  send(message: RunnerToServer): boolean;
  sandbox: SandboxInfo;
  /** The scrubbed environment shells start from. */
  env: Record<string, string>;
  /** The person's terminal may reach the network (default true: it is theirs, not the agent's). */
  network?: boolean;
  /** The workspace's network namespace, shared with commands; absent: one of the manager's own. */
  workspaceNetwork?: WorkspaceNetwork;
  /** Folders the terminal may not see (SandboxSpec.hide). */
  hide?: string[];
  /** Memory and processes per terminal (a cgroup), CPU time and file size per process (limits.ts). */
  limits?: Limits;
  shell?: string;
  graceMs?: number;
  scrollbackChars?: number;
  maxPtys?: number;
}

export interface StartedTerminal {
  pty: IPty;
  /** In the environment of everything the shell starts, for killTree. */
  marker: string;
  jail?: Jail;
  /** The sandbox's command line (vanishedCover reads a failed start's error against it). */
  sandboxArgs: string[];
  /** The PTY master's descriptor and the slave's path, which node-pty keeps out of its typings. */
  masterFd?: number;
  slavePath?: string;
  /** node-pty's read stream of the master: destroying it closes the master's descriptor. */
  masterStream?: { readonly destroyed: boolean };
}

export const signalName = (n: number | undefined): string | undefined =>
  n ? Object.entries(osConstants.signals).find(([, v]) => v === n)?.[0] : undefined;

/** Spawns the terminal's shell; a spawn that fails throws, its jail undone. */
export function startTerminal(
  nodePty: typeof import("node-pty"),
  o: PtyOptions,
  net: SandboxNetwork,
  size: { cols: number; rows: number },
): StartedTerminal {
  const marker = newMarker();
  const shell = o.shell ?? "bash";
  // Unsandboxed, the shell still dies with the runner and takes what it started along (launch.ts).
  const jail = o.limits && makeJail("pty", o.limits);
  const inner = [
    ...(o.limits ? rlimitPrefix(o.limits, jail?.dirs.memory !== undefined) : []),
    ...(o.sandbox.available ? awaitBound() : []),
    shell,
    "-l",
  ];
  const wrapped = sandboxed(
    o.sandbox,
    {
      workspace: o.workspaceRoot,
      cwd: o.workspaceRoot,
      ...net,
      newSession: false,
      hide: o.hide,
      memoryBytes: o.limits?.memoryBytes,
    },
    o.sandbox.available ? inner : [...directTether(), ...inner],
  );
  const leader = ttyLeader();
  const led = [...leader, wrapped.file, ...wrapped.args];
  const [file, ...args] = jail ? jail.wrap(led) : led;
  const env = {
    ...o.env,
    ...(o.sandbox.available ? SANDBOX_ENV : {}),
    TERM: "xterm-256color",
    COLORTERM: "truecolor",
    [MARKER_VAR]: marker,
  };
  let pty: IPty;
  try {
    pty = nodePty.spawn(file, args, {
      name: "xterm-256color",
      cols: size.cols,
      rows: size.rows,
      cwd: o.workspaceRoot,
      env,
    });
  } catch (e) {
    // node-pty may throw after its fork (its read stream of the master could not be made): the
    // shell it started then runs with no one to end it; the marker finds it.
    void killTree(undefined, marker).then(() => jail?.dispose());
    throw e;
  }
  // node-pty's UnixTerminal has the master's descriptor as `fd`, the slave's path as `_pty`, and
  // the master's read stream as `_socket`.
  const fd = (pty as IPty & { fd?: unknown }).fd;
  const tty = (pty as IPty & { _pty?: unknown })._pty;
  const masterFd = typeof fd === "number" ? fd : undefined;
  const stream = (pty as IPty & { _socket?: { destroyed?: unknown } })._socket;
  if (leader.length > 0 && masterFd !== undefined) holdTerminal(masterFd, pty.pid);
  return {
    pty,
    marker,
    jail,
    sandboxArgs: wrapped.args,
    masterFd,
    slavePath: typeof tty === "string" ? tty : undefined,
    masterStream: stream && typeof stream.destroyed === "boolean" ? (stream as { destroyed: boolean }) : undefined,
  };
}

/** The network a terminal that wants it lacks, to say in it; undefined when it has it or wants none. */
export function missingNetwork(wanted: boolean, net: SandboxNetwork, workspace: WorkspaceNetwork): string | undefined {
  if (!wanted) return undefined;
  if (!net.network) return "no network (the workspace's network namespace could not start; see the runner's log)";
  return workspace.mode === "none" ? `no outbound network: ${workspace.reason}` : undefined;
}

/** The shell only says "Killed": which limit did it is said in the terminal, as for commands. */
export function watchLimits(jail: Jail | undefined, say: (text: string) => void): NodeJS.Timeout | undefined {
  if (!jail) return undefined;
  let seen = jail.counts();
  const watch = setInterval(() => {
    const note = jail.report(seen);
    seen = jail.counts();
    if (note) say(`\x1b[33mquiver: ${note.replaceAll("\n", "\r\nquiver: ")}\x1b[0m\r\n`);
  }, 1000);
  watch.unref();
  return watch;
}

/**
 * The namespace bubblewrap unshared for the terminal, once it has (a few tries while it starts,
 * while `wanted`). The nearest process in it is bubblewrap's own, so nothing the shell starts can
 * stand in for the record; the preview checks the record's start time on every read.
 */
export async function terminalNamespace(pid: number, wanted: () => boolean): Promise<ProcNamespace | undefined> {
  for (let attempt = 0; attempt < 20 && wanted(); attempt++) {
    const found = await sandboxNamespace(pid);
    if (found) return { ...found, of: "terminal" };
    await new Promise((r) => setTimeout(r, 100));
  }
  return undefined;
}
