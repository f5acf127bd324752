// Warm sandboxes: instead of a new bubblewrap (and a login shell) per command, one long-lived
// sandbox per workspace and network setting runs an exec server (exec-server.ts) that starts
// each command itself. Started on the first command, disposed when idle or on shutdown, and
// restarted on the next command if it died (commands in flight then fail, saying so). The
// network one runs in the workspace's network namespace (netns.ts), shared with the terminals.
//
// Each command still gets a PID namespace of its own, `unshare --pid --fork --kill-child
// --mount-proc` inside the sandbox: the sandbox's namespace now outlives commands, and only a
// namespace ending kills `setsid` children that also dropped the marker. The exec server keeps
// one such namespace started ahead with a non-login bash waiting in it (COMMAND_SHELL); a
// command is handed to it on stdin with its cwd and marker, and run with `eval`, which behaves
// as `bash -c` does (same $0, $-, exit codes, errors) except that a syntax error's message
// names no line. That bash is PID 1 of the namespace, so signals it sends itself without a
// handler (`kill $$`) are ignored. Where unshare cannot work, commands are plain `bash -c`
// spawns and the exec server sweeps by marker instead (kill.ts).
//
// The exec server keeps CAP_SYS_ADMIN, which making those namespaces needs; each command loses
// it (setpriv, sandbox.ts dropMountCap) before it runs, so it cannot unmount the masks over
// Quiver's folders. The whole sandbox is one cgroup (its memory and processes limits are shared
// by the commands running in it at once); CPU time and file size are each command's (limits.ts).
import { realpathSync } from "node:fs";
import { execServerStart, PROJECT_ROOT } from "./bundle";
import { ExecServerClient, type OutputSink, type RemoteCommand } from "./exec-client";
import { MARKER_VAR, newMarker } from "./kill";
import { BASH_C, type Launched, type Launcher, type LaunchSpec } from "./launch";
import { boundSandboxCounts, sandboxCounts } from "./ns-counts";
import { makeJail, oomFirstPrefix, rlimitPrefix, type Jail, type Limits } from "./limits";
import { captureLoginEnv } from "./login-env";
import type { WorkspaceNetwork } from "./netns";
import { sandboxNamespace, type ProcNamespace } from "./procfs";
import { vanishedCover } from "./host-sockets";
import { hostSecrets } from "./host-secrets";
import { bwrapArgs, dropMountCap, findOnPath, type SandboxInfo } from "./sandbox";

/** How long a kill may go unconfirmed before the whole exec server is killed instead. */
const KILL_CONFIRM_MS = 5_000;
/**
 * Reads a prelude and a command, NUL-terminated, from stdin, then runs them. The command is
 * eval'd with the reader's variables already unset, so it sees what `bash -c` would.
 */
export const COMMAND_SHELL =
  'IFS= read -r -d "" __quiver_prelude && IFS= read -r -d "" __quiver_command || exit 125; ' +
  'eval "$__quiver_prelude"; eval "unset __quiver_prelude __quiver_command; $__quiver_command"';
const quote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

export interface WarmOptions {
  sandbox: SandboxInfo;
  /** The environment the exec server and the login profile start from (already scrubbed). */
  env: Record<string, string>;
  envAllow: readonly string[];
  /** A sandbox with no command running for this long is stopped. */
  idleMs: number;
  startTimeoutMs: number;
  /** Folders no command may see (SandboxSpec.hide). */
  hide?: string[];
  /** Memory and processes per sandbox (a cgroup), CPU time and file size per command (rlimits). */
  limits?: Limits;
  /** Where sandboxes granted network go: the workspace's namespace (netns.ts). */
  network: WorkspaceNetwork;
  log(line: string): void;
}

interface Ready {
  client: ExecServerClient;
  /** argv prefix giving each command its own PID namespace; empty when none works here. */
  pidns: string[];
  /** argv after the PID namespace's: drops CAP_SYS_ADMIN (sandbox.ts), then sets the rlimits (limits.ts). */
  inner: string[];
  /** The cgroup bounding the whole sandbox's memory and processes, where cgroups work. */
  jail?: Jail;
  /** Its network namespace when not the runner's (read from outside before any command ran). */
  namespace?: ProcNamespace;
}

/** What the command shell reads: cwd, marker and stdin /dev/null first, then the command itself. */
export function commandInput(spec: LaunchSpec): string {
  if (spec.command.includes("\0")) throw new Error("the command contains a NUL byte");
  // SECONDS=0: the shell was started ahead, but the command's clock starts now.
  const prelude = `cd -- ${quote(spec.cwd)} || exit 1; unset OLDPWD; export ${MARKER_VAR}=${quote(spec.marker)}; exec </dev/null; SECONDS=0`;
  return `${prelude}\0${spec.command}\0`;
}

/** A start that failed only because a socket it covers was removed between listing and mount. */
class CoverVanished extends Error {
  constructor(
    message: string,
    readonly socket: string,
  ) {
    super(message);
  }
}

/** Why counts could not be bounded, said once each. */
const saidUnbounded = new Set<string>();

function pidnsCandidates(): string[][] {
  const unshare = findOnPath("unshare");
  if (!unshare) return [];
  return [
    [unshare, "--pid", "--fork", "--kill-child", "--mount-proc"],
    // Without privileges in the sandbox, a nested user namespace grants them (no /proc of its own then).
    [unshare, "--user", "--map-current-user", "--pid", "--fork", "--kill-child"],
  ];
}

export class WarmSandbox {
  private current: Promise<Ready> | undefined;
  private active = 0;
  private idleTimer: NodeJS.Timeout | undefined;
  private disposed = false;
  /** Exec servers stopped on purpose: their end is not news. */
  private readonly retired = new WeakSet<ExecServerClient>();

  constructor(
    private readonly o: WarmOptions,
    private readonly workspace: string,
    private readonly network: boolean,
  ) {}

  async launch(spec: LaunchSpec, sink: OutputSink): Promise<Launched> {
    if (this.disposed) throw new Error("the runner is shutting down");
    this.active++;
    clearTimeout(this.idleTimer);
    let ready: Ready;
    let remote: RemoteCommand;
    try {
      ready = await this.ready();
      // A declared argv (run_check) is spawned as is, in a PID namespace of its own: no shell reads it.
      remote = spec.argv
        ? this.spawn(ready, spec.argv, spec.cwd, spec.marker, sink)
        : ready.pidns.length > 0
          ? ready.client.run(commandInput(spec), sink)
          : this.spawn(ready, [...BASH_C, spec.command], spec.cwd, spec.marker, sink);
    } catch (err) {
      this.settled();
      throw err;
    }
    void remote.exited.then(() => this.settled());
    return this.launched(ready.client, remote, ready.jail);
  }

  private settled(): void {
    if (--this.active > 0 || this.disposed) return;
    this.idleTimer = setTimeout(() => void this.stop("idle"), this.o.idleMs);
    this.idleTimer.unref();
  }

  private spawn(ready: Ready, argv: string[], cwd: string, marker: string, sink: OutputSink): RemoteCommand {
    const sweep = ready.pidns.length === 0 ? marker : undefined;
    return ready.client.spawn([...ready.pidns, ...ready.inner, ...argv], cwd, { [MARKER_VAR]: marker }, sink, sweep);
  }

  private launched(client: ExecServerClient, remote: RemoteCommand, jail?: Jail): Launched {
    // The cgroup is the sandbox's: a limit hit while this command ran is laid to it.
    const before = jail?.counts();
    const exited = jail
      ? remote.exited.then((e) => {
          const note = jail.report(before);
          return note ? { ...e, error: e.error ? `${e.error}\n${note}` : note } : e;
        })
      : remote.exited;
    return {
      exited,
      kill: async () => {
        remote.kill();
        const timer = setTimeout(
          () => client.terminate(`did not confirm a kill within ${KILL_CONFIRM_MS} ms`),
          KILL_CONFIRM_MS,
        );
        await exited;
        clearTimeout(timer);
      },
    };
  }

  /** The running exec server, started (again) if there is none or it died. */
  private async ready(): Promise<Ready> {
    const current = this.current;
    if (current) {
      const ready = await current;
      if (ready.client.alive) return ready;
      if (this.current === current) this.current = undefined;
    }
    this.current ??= this.start();
    const started = this.current;
    return started.catch((err: Error) => {
      if (this.current === started) this.current = undefined;
      throw err;
    });
  }

  /** Starts an exec server; again once when a host socket vanished mid-start (host-sockets.ts). */
  private async start(): Promise<Ready> {
    try {
      return await this.startOnce();
    } catch (err) {
      if (!(err instanceof CoverVanished)) throw err;
      this.o.log(`warm sandbox: ${err.socket} went away while the sandbox started; starting it again`);
      return this.startOnce();
    }
  }

  private async startOnce(): Promise<Ready> {
    const { bwrap } = this.o.sandbox;
    if (!bwrap) throw new Error("no sandbox to warm");
    const { NODE_OPTIONS: _ignored, ...base } = this.o.env; // the exec server's own Node flags are ours
    const start = await execServerStart(this.o.log);
    // The exec server runs from this checkout, which is masked (and under /tmp in a CI clone):
    // its one bundled file is bound back; under tsx it needs the whole checkout.
    // So is node when it lies in a masked folder (Quiver's, or a home: host-secrets.ts).
    const hide = this.o.hide ?? [];
    const node = realpathSync(process.execPath);
    const readOnly = [
      start.bundled ? start.args[0] : PROJECT_ROOT,
      ...([...hide, ...hostSecrets().hide].some((m) => node.startsWith(`${m}/`)) ? [node] : []),
    ];
    const net = await this.o.network.sandboxNetwork(this.network);
    // The exec server keeps CAP_SYS_ADMIN for each command's PID namespace and /proc; commands lose it.
    const drop = dropMountCap();
    const spec = {
      workspace: this.workspace,
      cwd: this.workspace,
      ...net,
      newSession: true,
      readOnly,
      hide,
      keepMountCap: drop.length > 0,
      memoryBytes: this.o.limits?.memoryBytes,
    };
    // Under tsx (no bundle), its disk cache would sit in the sandbox's /tmp, which commands are promised is empty.
    const env = start.bundled ? base : { ...base, TSX_DISABLE_CACHE: "1" };
    const argv = bwrapArgs(bwrap, spec, [process.execPath, ...start.args]);
    const jail = this.o.limits && makeJail("sandbox", this.o.limits);
    const rlimits = this.o.limits ? rlimitPrefix(this.o.limits, jail?.dirs.memory !== undefined) : [];
    const [file, ...args] = jail ? jail.wrap([argv.file, ...argv.args]) : [argv.file, ...argv.args];
    const client = new ExecServerClient(file, args, {
      cwd: this.workspace,
      env,
      startTimeoutMs: this.o.startTimeoutMs,
      log: this.o.log,
    });
    const label = `${this.workspace}${this.network ? " (network)" : ""}`;
    void client.dead.then((reason) => this.retired.has(client) || this.o.log(`warm sandbox for ${label}: ${reason}`));
    void client.exited.then(() => jail?.dispose());
    try {
      await client.ready;
      // The probe runs only `true` of ours, so the namespace is still read before any command.
      const [namespace, pidns] = await Promise.all([
        client.pid === undefined ? undefined : sandboxNamespace(client.pid),
        this.probePidns(client, drop),
      ]);
      if (pidns.length === 0)
        this.o.log(`no PID namespace per command in ${label}: stragglers are found by marker instead`);
      // Before the login profile, the first thing of the workspace's own to run.
      const counts = sandboxCounts(this.o.limits?.processes ?? 0, pidns.includes("--user"));
      const unbounded = client.pid === undefined ? "no process" : await boundSandboxCounts(client.pid, counts);
      if (unbounded && !saidUnbounded.has(unbounded)) {
        saidUnbounded.add(unbounded);
        this.o.log(`sandbox namespace and inotify counts are not bounded (${unbounded})`);
      }
      const ready: Ready = { client, pidns, inner: [...drop, ...rlimits, ...oomFirstPrefix()], jail, namespace };
      client.send({ type: "env", env: this.o.env });
      const run = async (a: string[], sink: OutputSink) =>
        this.launched(client, this.spawn(ready, a, this.workspace, newMarker(), sink));
      client.send({ type: "env", env: await captureLoginEnv(run, this.o.env, this.o.envAllow, this.o.log) });
      if (pidns.length > 0)
        client.send({ type: "shell", argv: [...pidns, ...ready.inner, ...BASH_C, COMMAND_SHELL], cwd: this.workspace });
      if (!client.alive) throw new Error(await client.dead);
      return ready;
    } catch (err) {
      client.terminate("failed while starting");
      const message = `the sandbox could not start: ${(err as Error).message}`;
      const socket = vanishedCover(message, argv.args);
      throw socket ? new CoverVanished(message, socket) : new Error(message);
    }
  }

  private async probePidns(client: ExecServerClient, drop: string[]): Promise<string[]> {
    for (const prefix of pidnsCandidates()) {
      const r = await client.spawn([...prefix, ...drop, "true"], this.workspace, {}, () => {}).exited;
      if (r.code === 0) return prefix;
    }
    return [];
  }

  /** Stops the exec server (and with it every command in the sandbox); resolves once it is gone. */
  async stop(why: string): Promise<void> {
    clearTimeout(this.idleTimer);
    const current = this.current;
    this.current = undefined;
    const ready = await current?.catch(() => undefined);
    if (!ready) return;
    this.retired.add(ready.client);
    ready.client.terminate(`stopped (${why})`);
    await ready.client.exited;
  }

  dispose(): Promise<void> {
    this.disposed = true;
    return this.stop("runner shutting down");
  }

  /** Its network namespace while it runs (none is started to answer). */
  async namespace(): Promise<ProcNamespace | undefined> {
    const ready = await this.current?.catch(() => undefined);
    return ready?.client.alive ? ready.namespace : undefined;
  }
}

/** One warm sandbox per workspace and network setting (different namespaces, so different sandboxes). */
export class WarmLauncher implements Launcher {
  readonly sandboxed = true;
  private readonly sandboxes = new Map<string, WarmSandbox>();

  constructor(private readonly o: WarmOptions) {}

  launch(spec: LaunchSpec, sink: OutputSink): Promise<Launched> {
    const key = `${spec.network ? "net" : "nonet"}:${spec.workspace}`;
    let sandbox = this.sandboxes.get(key);
    if (!sandbox) this.sandboxes.set(key, (sandbox = new WarmSandbox(this.o, spec.workspace, spec.network)));
    return sandbox.launch(spec, sink);
  }

  /** The network namespaces of the sandboxes running now (a sandbox without network has its own). */
  async namespaces(): Promise<ProcNamespace[]> {
    const all = await Promise.all([...this.sandboxes.values()].map((s) => s.namespace()));
    return all.filter((n): n is ProcNamespace => n !== undefined);
  }

  async dispose(): Promise<void> {
    const all = [...this.sandboxes.values()];
    this.sandboxes.clear();
    await Promise.all(all.map((s) => s.dispose()));
  }
}
