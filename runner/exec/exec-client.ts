// The runner's end of one exec server: owns the child process (bwrap … node exec-server.ts),
// frames requests and events as JSON lines, routes output and exits to each command by id,
// and fails every command in flight, clearly, the moment the exec server dies.
import { spawn, type ChildProcess } from "node:child_process";
import { ExecServerEvent, type ExecServerRequest } from "../../server/protocol/exec-server";

export interface RemoteExit {
  code: number | null;
  signal: string | null;
  /** Set when the command could not start or its exec server died under it. */
  error?: string;
}

export type OutputSink = (fd: 1 | 2, chunk: Buffer) => void;

export interface RemoteCommand {
  readonly exited: Promise<RemoteExit>;
  kill(): void;
}

interface Entry {
  sink: OutputSink;
  resolve(exit: RemoteExit): void;
}

export class ExecServerClient {
  private readonly child: ChildProcess;
  private readonly commands = new Map<number, Entry>();
  private nextId = 1;
  private stderrTail = "";
  private deadReason: string | undefined;
  private readonly startTimer: NodeJS.Timeout;
  private failReady!: (e: Error) => void;
  private reportDeath!: (reason: string) => void;
  /** Resolves when the exec server said ready; rejects if it died or timed out first. */
  readonly ready: Promise<void>;
  /** Resolves once the exec server is known dead (or abandoned), with why. */
  readonly dead: Promise<string>;
  /** Resolves once its process has actually exited and closed its pipes. */
  readonly exited: Promise<void>;

  /** The process spawned (bwrap, or the cgroup wrapper that became it); undefined if none started. */
  get pid(): number | undefined {
    return this.child.pid;
  }

  constructor(
    file: string,
    args: string[],
    options: { cwd: string; env: Record<string, string>; startTimeoutMs: number; log(line: string): void },
  ) {
    this.child = spawn(file, args, {
      cwd: options.cwd,
      env: options.env as unknown as NodeJS.ProcessEnv,
      stdio: ["pipe", "pipe", "pipe"],
    });
    let markReady!: () => void;
    this.ready = new Promise<void>((resolve, reject) => ((markReady = resolve), (this.failReady = reject)));
    this.ready.catch(() => {}); // a caller may never have awaited it
    this.dead = new Promise<string>((resolve) => (this.reportDeath = resolve));
    this.startTimer = setTimeout(
      () => this.terminate(`did not start within ${options.startTimeoutMs} ms`),
      options.startTimeoutMs,
    );

    let buffered = "";
    this.child.stdout!.setEncoding("utf8");
    this.child.stdout!.on("data", (chunk: string) => {
      buffered += chunk;
      let nl: number;
      while ((nl = buffered.indexOf("\n")) >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        const event = this.decode(line, options.log);
        if (event?.type === "ready") {
          clearTimeout(this.startTimer);
          markReady();
        } else if (event) this.route(event);
      }
    });
    this.child.stderr!.setEncoding("utf8");
    this.child.stderr!.on("data", (text: string) => {
      this.stderrTail = (this.stderrTail + text).slice(-2000);
      for (const line of text.split("\n")) if (line.trim()) options.log(`exec server: ${line.trim()}`);
    });
    this.child.stdin!.on("error", () => {}); // EPIPE when it died; the exit handler reports it
    this.child.once("error", (err) => this.died(`could not start: ${err.message}`));
    // close, not exit: events still in the pipe are read before the commands are failed.
    this.child.once("close", (code, signal) => this.died(`exited (${signal ?? `code ${code}`})`));
    this.exited = new Promise<void>((resolve) => {
      this.child.once("close", () => resolve());
      this.child.once("error", () => resolve());
    });
  }

  get alive(): boolean {
    return this.deadReason === undefined;
  }

  send(request: ExecServerRequest): void {
    if (this.alive) this.child.stdin!.write(`${JSON.stringify(request)}\n`);
  }

  /** Starts argv in the sandbox; output goes to `sink` until the exit arrives. */
  spawn(
    argv: string[],
    cwd: string,
    env: Record<string, string>,
    sink: OutputSink,
    sweepMarker?: string,
  ): RemoteCommand {
    return this.track(sink, (id) => ({ type: "spawn", id, argv, cwd, env, ...(sweepMarker ? { sweepMarker } : {}) }));
  }

  /** Hands `input` to the command shell (see the `shell` request); output goes to `sink`. */
  run(input: string, sink: OutputSink): RemoteCommand {
    return this.track(sink, (id) => ({ type: "run", id, input }));
  }

  private track(sink: OutputSink, request: (id: number) => ExecServerRequest): RemoteCommand {
    const id = this.nextId++;
    let resolve!: (e: RemoteExit) => void;
    const exited = new Promise<RemoteExit>((r) => (resolve = r));
    if (!this.alive) resolve({ code: null, signal: null, error: this.deadReason });
    else {
      this.commands.set(id, { sink, resolve });
      this.send(request(id));
    }
    return { exited, kill: () => this.send({ type: "kill", id }) };
  }

  /** Kills the exec server, and with it its PID namespace and every command in it. */
  terminate(reason: string): void {
    if (!this.alive) return;
    this.child.kill("SIGKILL");
    this.died(reason);
  }

  private died(reason: string): void {
    if (this.deadReason !== undefined) return;
    clearTimeout(this.startTimer);
    const tail = this.stderrTail.trim().split("\n").slice(-3).join(" | ");
    this.deadReason = `the sandbox's exec server ${reason}${tail ? `: ${tail}` : ""}`;
    for (const entry of this.commands.values()) {
      entry.resolve({
        code: null,
        signal: null,
        error: `${this.deadReason}; the command was killed with it and its outcome is unknown`,
      });
    }
    this.commands.clear();
    this.failReady(new Error(this.deadReason));
    this.reportDeath(this.deadReason);
  }

  private decode(line: string, log: (line: string) => void): ExecServerEvent | undefined {
    if (!line) return undefined;
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch {
      log(`exec server: ignored a line that is not JSON: ${line.slice(0, 200)}`);
      return undefined;
    }
    const parsed = ExecServerEvent.safeParse(json);
    if (!parsed.success) log(`exec server: ignored a bad event: ${parsed.error.issues[0]?.message ?? "invalid"}`);
    return parsed.success ? parsed.data : undefined;
  }

  private route(event: Exclude<ExecServerEvent, { type: "ready" }>): void {
    const entry = this.commands.get(event.id);
    if (!entry) return;
    if (event.type === "output") entry.sink(event.fd, Buffer.from(event.data, "base64"));
    else {
      this.commands.delete(event.id);
      entry.resolve({ code: event.code, signal: event.signal, ...(event.error ? { error: event.error } : {}) });
    }
  }
}
