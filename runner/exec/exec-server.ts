// The exec server: a small long-lived process the runner starts INSIDE the sandbox (warm.ts), so
// a command pays for no new bubblewrap. It reads one request per line on stdin and streams
// output and exits back as lines on stdout (protocol: server/protocol/exec-server.ts). `spawn`
// starts an argv in its own process group with stdin /dev/null. `run` hands a command to the
// command shell (`shell`), one of which is always started ahead, so the fork, exec and PID
// namespace set-up happen between commands rather than during one. stdin closing means the
// runner is gone: everything still running is killed and the server exits. What it writes to
// stderr is plain lines the runner reads: exec-client.ts logs each through the runner's logger
// (runner/log.ts), so no logger is bundled into every warm sandbox for a few lines.
//
// Output is read only as fast as the runner takes it: a command printing as fast as it can
// (`cat /dev/zero`) outran the runner and piled its output up in this server's heap until V8
// gave up, and every command of the sandbox died with the server. Now, while stdout's buffer is
// full, commands' pipes are not read, and a command blocks on its write as on a slow terminal.
import { spawn, type ChildProcess } from "node:child_process";
import type { Readable } from "node:stream";
import { ExecServerRequest, type ExecServerEvent } from "../../server/protocol/exec-server";
import { killTree } from "./kill";

type Event = ExecServerEvent extends infer E ? (E extends { id: number } ? Omit<E, "id"> : never) : never;

/** A started process; its events wait until it has an id (a shell started ahead has none yet). */
class Proc {
  id: number | undefined;
  ended = false;
  private backlog: Event[] = [];

  constructor(
    readonly child: ChildProcess,
    readonly marker?: string,
  ) {}

  emit(event: Event): void {
    if (this.id === undefined) this.backlog.push(event);
    else send({ ...event, id: this.id } as ExecServerEvent);
  }

  assign(id: number): void {
    this.id = id;
    running.set(id, this);
    for (const event of this.backlog) this.emit(event);
    this.backlog = [];
  }
}

const running = new Map<number, Proc>();
let defaults: Record<string, string> = {};
let shell: { argv: string[]; cwd: string } | undefined;
let ahead: Proc | undefined;

function send(event: ExecServerEvent): void {
  process.stdout.write(`${JSON.stringify(event)}\n`);
}

/** Command pipes not read until stdout drains. */
const paused = new Set<Readable>();
process.stdout.on("drain", () => {
  for (const stream of paused) stream.resume();
  paused.clear();
});

/** Sends each chunk of `stream` as `fd`'s output, pausing it while the runner has not taken the last ones. */
function forward(proc: Proc, fd: 1 | 2, stream: Readable): void {
  stream.on("data", (c: Buffer) => {
    proc.emit({ type: "output", fd, data: c.toString("base64") });
    if (process.stdout.writableNeedDrain && !paused.has(stream)) {
      stream.pause();
      paused.add(stream);
    }
  });
  stream.once("close", () => paused.delete(stream));
}

function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  for (const target of [-pid, pid]) {
    try {
      process.kill(target, "SIGKILL");
    } catch {
      /* already gone */
    }
  }
}

function start(argv: string[], cwd: string, env: Record<string, string>, stdin: boolean, marker?: string): Proc {
  const child = spawn(argv[0], argv.slice(1), {
    cwd,
    // Next's types make NODE_ENV required on ProcessEnv; a command's environment need not have it.
    env: { ...defaults, ...env } as unknown as NodeJS.ProcessEnv,
    stdio: [stdin ? "pipe" : "ignore", "pipe", "pipe"],
    detached: true, // own process group: one signal reaches everything that stayed in it
  });
  const proc = new Proc(child, marker);
  const exit = (code: number | null, signal: string | null, error?: string) => {
    if (proc.ended) return;
    proc.ended = true;
    if (proc.id !== undefined) running.delete(proc.id);
    if (ahead === proc) ahead = undefined;
    proc.emit({ type: "exit", code, signal, ...(error ? { error } : {}) });
    // The next command shell starts once this command is answered, not while it runs. (Not
    // after one that died unused: a shell that cannot start would be restarted forever.)
    if (proc.id !== undefined) setImmediate(startAhead);
  };
  child.stdin?.on("error", () => {}); // EPIPE: it exited before reading; its exit says why
  forward(proc, 1, child.stdout!);
  forward(proc, 2, child.stderr!);
  let exited: { code: number | null; signal: string | null } | undefined;
  child.once("error", (err) => {
    if (child.pid === undefined) exit(null, null, err.message);
  });
  // Background children keep the pipes open after the command itself exits. In a PID namespace
  // of its own they died with it; without one, sweep them now so the pipes can close.
  child.once("exit", (code, signal) => {
    exited = { code, signal };
    if (marker) void killTree(child.pid, marker);
  });
  child.once("close", (code, signal) => exit(exited?.code ?? code, exited?.signal ?? signal));
  return proc;
}

function startAhead(): void {
  if (!shell || (ahead && !ahead.ended)) return;
  ahead = start(shell.argv, shell.cwd, {}, true);
}

function run(id: number, input: string): void {
  if (!shell) return send({ type: "exit", id, code: null, signal: null, error: "no command shell configured" });
  let proc = ahead && !ahead.ended ? ahead : undefined;
  ahead = undefined;
  proc ??= start(shell.argv, shell.cwd, {}, true);
  proc.assign(id);
  proc.child.stdin!.end(input);
  // A command that runs for a while should not leave the next one without a shell started ahead.
  setTimeout(startAhead, 50);
}

async function kill(id: number): Promise<void> {
  const p = running.get(id);
  if (!p) return;
  if (p.marker) await killTree(p.child.pid, p.marker);
  else killGroup(p.child.pid);
}

function handle(line: string): void {
  let json: unknown;
  try {
    json = JSON.parse(line);
  } catch {
    return void process.stderr.write(`exec server: ignored a line that is not JSON\n`);
  }
  const parsed = ExecServerRequest.safeParse(json);
  if (!parsed.success) {
    const id = (json as { id?: unknown })?.id;
    const why = `bad request: ${parsed.error.issues[0]?.message ?? "invalid"}`;
    if (typeof id === "number" && Number.isInteger(id) && id > 0)
      send({ type: "exit", id, code: null, signal: null, error: why });
    else process.stderr.write(`exec server: ${why}\n`);
    return;
  }
  const req = parsed.data;
  switch (req.type) {
    case "env":
      defaults = req.env;
      return;
    case "shell":
      shell = { argv: req.argv, cwd: req.cwd };
      if (ahead) killGroup(ahead.child.pid);
      ahead = undefined;
      return startAhead();
    case "spawn": {
      try {
        start(req.argv, req.cwd, req.env, false, req.sweepMarker).assign(req.id);
      } catch (err) {
        send({ type: "exit", id: req.id, code: null, signal: null, error: (err as Error).message });
      }
      return;
    }
    case "run":
      return run(req.id, req.input);
    case "kill":
      return void kill(req.id);
  }
}

let buffered = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk: string) => {
  buffered += chunk;
  let nl: number;
  while ((nl = buffered.indexOf("\n")) >= 0) {
    const line = buffered.slice(0, nl);
    buffered = buffered.slice(nl + 1);
    if (line) handle(line);
  }
});
process.stdin.on("end", () => {
  for (const p of running.values()) killGroup(p.child.pid);
  if (ahead) killGroup(ahead.child.pid);
  process.exit(0);
});
send({ type: "ready", pid: process.pid });
