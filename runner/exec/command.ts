// One running command: `bash -c CMD` with the login environment, started by a Launcher (warm
// sandbox or direct, see launch.ts) in its own process group with stdin /dev/null; stdout and
// stderr merged into a bounded buffer; a hard timeout that kills everything it started.
// Whoever reads it attaches a progress sink for live output.
import { constants as osConstants } from "node:os";
import { StringDecoder } from "node:string_decoder";
import { newMarker } from "./kill";
import type { Launched, Launcher, RemoteExit } from "./launch";
import { OutputBuffer } from "./output";
import { OutputSpool } from "./spool";

export type StopReason = "timeout" | "cancelled" | "killed";

export interface CommandExit {
  exitCode: number | null;
  signal: string | null;
  stopReason: StopReason | null;
}

export interface CommandSpec {
  command: string;
  /** Run this argv itself (execve, no shell): `command` is then only its display form. */
  argv?: string[];
  workspace: string;
  cwd: string;
  timeoutMs: number;
  maxOutputBytes: number;
  network: boolean;
  /** Keep the whole output (up to this many bytes, then its tail) for the server's spill. */
  spoolCeiling?: number;
}

/** Signals an rlimit sends (limits.ts), said plainly to whoever reads the output. */
const LIMIT_SIGNALS: Record<string, string> = {
  SIGXCPU: "CPU time limit reached (QUIVER_LIMIT_CPU_SECONDS)",
  SIGXFSZ: "file size limit reached (QUIVER_LIMIT_FILE_SIZE)",
};

const signalName = (n: number): string | null =>
  Object.entries(osConstants.signals).find(([, v]) => v === n)?.[0] ?? null;

export class Command {
  readonly startedAt = Date.now();
  readonly output: OutputBuffer;
  /** The whole output, when the server takes it (see spool.ts). */
  readonly spool: OutputSpool | undefined;
  readonly sandboxed: boolean;
  readonly network: boolean;
  exit: CommandExit | undefined;
  /** Resolves once the process has exited, its stragglers are dead and its output is drained. */
  readonly done: Promise<CommandExit>;
  /** Resolves once the command is running (or could not start): timeouts and yields count from here. */
  readonly started: Promise<void>;
  private launched: Launched | undefined;
  private stopReason: StopReason | null = null;
  private timer: NodeJS.Timeout | undefined;
  private sink: ((text: string) => void) | undefined;
  private readonly decoders = [new StringDecoder("utf8"), new StringDecoder("utf8")];

  constructor(spec: CommandSpec, launcher: Launcher) {
    this.output = new OutputBuffer(spec.maxOutputBytes);
    this.spool = spec.spoolCeiling ? new OutputSpool(spec.spoolCeiling) : undefined;
    this.sandboxed = launcher.sandboxed;
    this.network = spec.network;
    let finish!: (e: RemoteExit) => void;
    this.done = new Promise<CommandExit>((resolve) => {
      finish = (e) => {
        if (this.exit) return;
        clearTimeout(this.timer);
        if (e.error) this.push(Buffer.from(`${e.error}\n`));
        this.exit = this.describeExit(e);
        // A shell that outlives what it ran reports its signal as 128+N.
        const code = this.exit.exitCode;
        const limit =
          LIMIT_SIGNALS[this.exit.signal ?? (code !== null && code > 128 ? (signalName(code - 128) ?? "") : "")];
        if (limit) this.push(Buffer.from(`killed: ${limit}\n`));
        resolve(this.exit);
      };
    });
    const spec2 = {
      command: spec.command,
      argv: spec.argv,
      workspace: spec.workspace,
      cwd: spec.cwd,
      network: spec.network,
      marker: newMarker(),
    };
    this.started = launcher
      .launch(spec2, (fd, chunk) => this.received(fd, chunk))
      .then(
        (launched) => {
          this.launched = launched;
          void launched.exited.then(finish);
          if (this.stopReason) void launched.kill();
          else this.timer = setTimeout(() => void this.stop("timeout"), spec.timeoutMs);
        },
        (err: Error) => finish({ code: null, signal: null, error: `failed to start: ${err.message}` }),
      );
  }

  private describeExit(e: RemoteExit): CommandExit {
    // In the sandbox the shell outlives what it ran, and reports a child killed by signal N as 128+N.
    if (this.sandboxed && e.signal === null && e.code !== null && e.code > 128 && e.code < 128 + 65) {
      return { exitCode: e.code, signal: signalName(e.code - 128), stopReason: this.stopReason };
    }
    return { exitCode: e.code, signal: e.signal, stopReason: this.stopReason };
  }

  private push(chunk: Buffer): void {
    this.output.push(chunk);
    this.spool?.push(chunk);
  }

  private received(fd: 1 | 2, chunk: Buffer): void {
    this.push(chunk);
    const text = this.decoders[fd - 1].write(chunk);
    if (text && this.sink) this.sink(text);
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
    await this.started;
    await this.launched?.kill();
    return this.done;
  }
}
