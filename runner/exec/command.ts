// One running command: `bash -lc CMD` in its own process group (inside the sandbox when there is
// one), stdin /dev/null, stdout and stderr merged into a bounded buffer, and a hard timeout
// that kills everything it started. Whoever reads it attaches a progress sink for live output.
import { spawn, type ChildProcess } from "node:child_process";
import { StringDecoder } from "node:string_decoder";
import { constants as osConstants } from "node:os";
import { killTree, MARKER_VAR, newMarker } from "./kill";
import { OutputBuffer } from "./output";
import { sandboxed, SANDBOX_ENV, type SandboxInfo } from "./sandbox";

export type StopReason = "timeout" | "cancelled" | "killed";

export interface CommandExit {
  exitCode: number | null;
  signal: string | null;
  stopReason: StopReason | null;
}

export interface CommandSpec {
  command: string;
  workspace: string;
  cwd: string;
  env: Record<string, string>;
  timeoutMs: number;
  maxOutputBytes: number;
  network: boolean;
  sandbox: SandboxInfo;
}

const signalName = (n: number): string | null =>
  Object.entries(osConstants.signals).find(([, v]) => v === n)?.[0] ?? null;

export class Command {
  readonly startedAt = Date.now();
  readonly output: OutputBuffer;
  readonly sandboxed: boolean;
  readonly network: boolean;
  exit: CommandExit | undefined;
  /** Resolves once the process has exited, its stragglers are dead and its output is drained. */
  readonly done: Promise<CommandExit>;
  private readonly child: ChildProcess;
  private readonly marker = newMarker();
  private stopReason: StopReason | null = null;
  private readonly timer: NodeJS.Timeout;
  private sink: ((text: string) => void) | undefined;

  constructor(spec: CommandSpec) {
    this.output = new OutputBuffer(spec.maxOutputBytes);
    this.sandboxed = spec.sandbox.available;
    this.network = spec.network;
    const spawnSpec = sandboxed(
      spec.sandbox,
      { workspace: spec.workspace, cwd: spec.cwd, network: spec.network, newSession: true },
      ["bash", "-lc", spec.command],
    );
    const env: Record<string, string> = { ...spec.env, ...(this.sandboxed ? SANDBOX_ENV : {}), [MARKER_VAR]: this.marker };
    this.child = spawn(spawnSpec.file, spawnSpec.args, {
      cwd: spec.cwd,
      // Next's types make NODE_ENV required on ProcessEnv; a command's environment need not have it.
      env: env as unknown as NodeJS.ProcessEnv,
      stdio: ["ignore", "pipe", "pipe"],
      detached: true, // own process group, so the whole group can be signalled
    });
    const decoders = [new StringDecoder("utf8"), new StringDecoder("utf8")];
    [this.child.stdout, this.child.stderr].forEach((stream, i) => {
      stream?.on("data", (chunk: Buffer) => {
        this.output.push(chunk);
        const text = decoders[i].write(chunk);
        if (text && this.sink) this.sink(text);
      });
    });
    this.timer = setTimeout(() => void this.stop("timeout"), spec.timeoutMs);
    this.done = new Promise<CommandExit>((resolve) => {
      let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
      const finish = (code: number | null, signal: NodeJS.Signals | null) => {
        if (this.exit) return;
        clearTimeout(this.timer);
        this.exit = this.describeExit(code, signal);
        resolve(this.exit);
      };
      this.child.once("error", (err) => {
        this.output.push(Buffer.from(`failed to start: ${err.message}\n`));
        finish(null, null);
      });
      // Background children keep the pipes open after the main process exits: they do not
      // outlive the command, so kill them, then wait for the pipes to drain.
      // In the sandbox the PID namespace dies with its first process, so only the unsandboxed
      // case needs the (slower) sweep.
      this.child.once("exit", (code, signal) => {
        exited = { code, signal };
        if (!this.sandboxed) void killTree(this.child.pid, this.marker);
      });
      this.child.once("close", (code, signal) => {
        const e = exited ?? { code, signal };
        finish(e.code, e.signal);
      });
    });
  }

  private describeExit(code: number | null, signal: NodeJS.Signals | null): CommandExit {
    // bwrap reports a child killed by signal N as exit 128+N.
    if (this.sandboxed && signal === null && code !== null && code > 128 && code < 128 + 65) {
      return { exitCode: code, signal: signalName(code - 128), stopReason: this.stopReason };
    }
    return { exitCode: code, signal, stopReason: this.stopReason };
  }

  get running(): boolean {
    return this.exit === undefined;
  }

  /** Live output goes to `sink` until detached; only one reader at a time. */
  attach(sink: ((text: string) => void) | undefined): void {
    this.sink = sink;
  }

  /** Kills the command and everything it started; resolves when all of it is gone. */
  async stop(reason: StopReason): Promise<CommandExit> {
    if (this.exit) return this.exit;
    this.stopReason ??= reason;
    await killTree(this.child.pid, this.marker);
    return this.done;
  }
}
