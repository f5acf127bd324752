// The `shell` op. A call either starts a command (and waits for it, or for `yield_time_ms`) or
// names a still-running command by its handle to read more of its output, or to kill it.
// Handles belong to the session that started them; a finished command's unread output is kept
// for a while, then dropped. Commands start through a Launcher: a warm sandbox per workspace
// and network setting when bubblewrap works, the runner's own spawn otherwise (launch.ts).
// Network, when granted, is the workspace's namespace, never the host's loopback (netns.ts).
import { randomBytes } from "node:crypto";
import { stat } from "node:fs/promises";
import { SHELL_LIMITS, ShellEndSessionInput, ShellInput, type ShellResultMeta } from "../../server/protocol/exec-ops";
import { defineOp, type OpContext, type OpResult } from "../ops";
import { resolveInside } from "../workspace/paths";
import { logFn } from "../log";
import { Command } from "./command";
import { DirectLauncher, type Launcher } from "./launch";
import type { Limits } from "./limits";
import { ProgressPump } from "./progress";
import { SANDBOX_ENV, type SandboxInfo } from "./sandbox";
import { WorkspaceNetwork } from "./netns";
import type { ProcNamespace } from "./procfs";
import { WarmLauncher } from "./warm";

export interface ShellOptions {
  sandbox: SandboxInfo;
  /** The scrubbed environment commands start from (the login profile runs on top of it once). */
  env: Record<string, string>;
  /** Secret-looking names the login profile may still add (what `env` holds is kept as is). */
  envAllow?: readonly string[];
  /** False: calls asking for network are refused on this runner. */
  allowNetwork: boolean;
  /** The workspace's network namespace, shared with the terminals; absent: one of the service's own. */
  network?: WorkspaceNetwork;
  /** Folders no command may see (SandboxSpec.hide). */
  hide?: string[];
  /** Resource limits per command (limits.ts). */
  limits?: Limits;
  /** Commands left running (yielded) per session. */
  maxBackground?: number;
  /** How long a finished, unread command's output is kept. */
  keepFinishedMs?: number;
  /** A warm sandbox with nothing running for this long is stopped (default 10 min). */
  sandboxIdleMs?: number;
  log?(line: string): void;
}

interface Job {
  handle: string;
  sessionId: string;
  command: Command;
  reading: boolean;
  /** Output offset up to which calls have streamed the output to the server. */
  streamed: number;
  gc?: NodeJS.Timeout;
}

const fail = (output: string): OpResult => ({ ok: false, output });

export class ShellService {
  private readonly jobs = new Map<string, Job>();
  private disposed = false;
  private readonly launcher: Launcher;
  private readonly network: WorkspaceNetwork;

  constructor(private readonly options: ShellOptions) {
    const { sandbox, env, envAllow = [] } = options;
    const log = options.log ?? logFn("exec");
    this.network = options.network ?? new WorkspaceNetwork({ sandboxed: sandbox.available, hostNetwork: false, log });
    this.launcher =
      sandbox.available && sandbox.bwrap
        ? new WarmLauncher({
            sandbox,
            env: { ...env, ...SANDBOX_ENV },
            envAllow,
            idleMs: options.sandboxIdleMs ?? 10 * 60_000,
            startTimeoutMs: 30_000,
            hide: options.hide,
            limits: options.limits,
            network: this.network,
            log,
          })
        : new DirectLauncher({ env, envAllow, limits: options.limits, log });
  }

  readonly op = defineOp({ input: ShellInput, run: (input, ctx) => this.run(input, ctx) });

  /** A deleted session's commands have no one left to poll or kill them: they end with it. */
  readonly endSessionOp = defineOp({
    input: ShellEndSessionInput,
    run: async (_input, ctx) => ({ ok: true, output: `${await this.endSession(ctx.sessionId)} command(s) stopped` }),
  });

  /** Stops the session's commands and forgets them (one a call is reading is forgotten once read). */
  async endSession(sessionId: string): Promise<number> {
    const jobs = [...this.jobs.values()].filter((j) => j.sessionId === sessionId);
    const running = jobs.filter((j) => j.command.running).length;
    await Promise.all(jobs.map((j) => j.command.stop("killed")));
    for (const job of jobs) if (!job.reading) this.forget(job);
    return running;
  }

  async run(input: ShellInput, ctx: OpContext): Promise<OpResult> {
    if (this.disposed) return fail("the runner is shutting down");
    if (input.session_id !== undefined) return this.poll(input.session_id, input, ctx);
    if (input.command === undefined) return fail("give a command to run, or a session_id to poll");
    if (input.command.includes("\0")) return fail("the command contains a NUL byte; a shell command line cannot");
    if (input.network && !this.options.allowNetwork) {
      return fail("network access for commands is disabled on this runner; run the command without network");
    }
    if (input.network && this.network.mode === "none") {
      return fail(
        `network access for commands is unavailable on this runner: ${this.network.reason}; run the command without network`,
      );
    }
    // Above the pipeline's read-only batch of 10, so a full batch never trips the cap.
    const limit = this.options.maxBackground ?? 16;
    if (this.sessionJobs(ctx.sessionId).length >= limit) {
      return fail(`${limit} commands of this session are still running; poll or kill one (session_id) first`);
    }
    let cwd = ctx.workspace.root;
    if (input.cwd !== undefined && input.cwd !== "" && input.cwd !== ".") {
      try {
        cwd = (await resolveInside(ctx.workspace.root, input.cwd, "read")).abs;
        if (!(await stat(cwd)).isDirectory()) return fail(`cwd ${JSON.stringify(input.cwd)} is not a directory`);
      } catch (e) {
        return fail(`cwd ${JSON.stringify(input.cwd)}: ${(e as Error).message}`);
      }
    }
    const command = new Command(
      {
        command: input.command,
        workspace: ctx.workspace.root,
        cwd,
        timeoutMs: input.timeout_ms ?? SHELL_LIMITS.defaultTimeoutMs,
        maxOutputBytes: input.max_output_bytes ?? SHELL_LIMITS.defaultMaxOutputBytes,
        network: input.network === true,
        spoolCeiling: ctx.output?.ceiling,
      },
      this.launcher,
    );
    return this.read(this.track(command, ctx), input.yield_time_ms, ctx, true);
  }

  /** A started command as a job of the session, forgotten some time after it ends. */
  private track(command: Command, ctx: OpContext): Job {
    const job: Job = {
      handle: `sh_${randomBytes(6).toString("hex")}`,
      sessionId: ctx.sessionId,
      command,
      reading: false,
      streamed: 0,
    };
    this.jobs.set(job.handle, job);
    void command.done.then(() => this.scheduleGc(job));
    return job;
  }

  /** Runs a declared argv to its end (run_check): execve of the argv, no shell, no network. */
  async runArgv(
    spec: { argv: string[]; cwd: string; timeoutMs: number; maxOutputBytes: number },
    ctx: OpContext,
  ): Promise<OpResult> {
    if (this.disposed) return fail("the runner is shutting down");
    const command = new Command(
      {
        command: spec.argv.join(" "),
        argv: spec.argv,
        workspace: ctx.workspace.root,
        cwd: spec.cwd,
        timeoutMs: spec.timeoutMs,
        maxOutputBytes: spec.maxOutputBytes,
        network: false,
        spoolCeiling: ctx.output?.ceiling,
      },
      this.launcher,
    );
    return this.read(this.track(command, ctx), undefined, ctx, true);
  }

  private async poll(handle: string, input: ShellInput, ctx: OpContext): Promise<OpResult> {
    const job = this.jobs.get(handle);
    if (!job || job.sessionId !== ctx.sessionId) {
      return fail(`no command with session_id ${handle} in this session (finished commands are forgotten once read)`);
    }
    if (job.reading) return fail(`session_id ${handle} is being read by another call; wait for it`);
    if (input.kill) {
      job.reading = true;
      await job.command.stop("killed");
      job.reading = false;
      return this.result(job, ctx);
    }
    return this.read(job, input.yield_time_ms ?? SHELL_LIMITS.defaultPollYieldMs, ctx, false);
  }

  /** Waits for exit, the yield time, or the call's abort; an aborted start kills the command. */
  private async read(job: Job, yieldMs: number | undefined, ctx: OpContext, starting: boolean): Promise<OpResult> {
    const { command } = job;
    job.reading = true;
    const pump = new ProgressPump((chunk) => ctx.progress(chunk));
    command.attach(pump.write);
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    let decided = false;
    const outcome = await Promise.race([
      command.done.then(() => "exit" as const),
      // A cold sandbox's start-up does not eat into the yield window.
      (starting ? command.started : Promise.resolve()).then(
        () =>
          new Promise<"yield">((resolve) => {
            if (yieldMs !== undefined && !decided) timer = setTimeout(() => resolve("yield"), yieldMs);
          }),
      ),
      new Promise<"abort">((resolve) => {
        onAbort = () => resolve("abort");
        if (ctx.signal.aborted) onAbort();
        else ctx.signal.addEventListener("abort", onAbort, { once: true });
      }),
    ]);
    decided = true;
    clearTimeout(timer);
    if (onAbort) ctx.signal.removeEventListener("abort", onAbort);
    command.attach(undefined);
    pump.dispose();
    if (outcome === "abort" && starting) await command.stop("cancelled");
    job.reading = false;
    return this.result(job, ctx);
  }

  private async result(job: Job, ctx: OpContext): Promise<OpResult> {
    const { command } = job;
    const running = command.running;
    const taken = command.output.take(!running);
    const stored = await this.stream(job, ctx);
    if (!running) this.forget(job);
    else if (job.gc) clearTimeout(job.gc);
    const exit = command.exit;
    const meta: ShellResultMeta = {
      running,
      sessionHandle: running ? job.handle : undefined,
      exitCode: exit?.exitCode ?? null,
      signal: exit?.signal ?? null,
      stopReason: exit?.stopReason ?? null,
      omittedBytes: taken.omitted,
      totalBytes: command.output.total,
      durationMs: Date.now() - command.startedAt,
      ...(stored ? { stored } : {}),
      sandboxed: command.sandboxed,
      network: command.network,
    };
    // Files the command changed reach the browser through the workspace's own watcher.
    return { ok: true, output: taken.text, meta };
  }

  /** Sends this call's range of the whole output to the server (see spool.ts); undefined when not asked. */
  private async stream(job: Job, ctx: OpContext): Promise<ShellResultMeta["stored"]> {
    const spool = job.command.spool;
    if (!spool || !ctx.output || ctx.signal.aborted) return undefined;
    const range = spool.describe(job.streamed, spool.total);
    job.streamed = range.to;
    job.reading = true;
    try {
      for await (const piece of spool.read(range.from, range.to)) await ctx.output.write(piece);
    } catch {
      return undefined; // cancelled or disconnected: the server discards the call anyway
    } finally {
      job.reading = false;
    }
    return range;
  }

  private scheduleGc(job: Job): void {
    if (!this.jobs.has(job.handle) || job.reading) return;
    job.gc = setTimeout(() => this.forget(job), this.options.keepFinishedMs ?? 10 * 60_000);
    job.gc.unref();
  }

  private forget(job: Job): void {
    if (job.gc) clearTimeout(job.gc);
    job.command.spool?.dispose();
    this.jobs.delete(job.handle);
  }

  private sessionJobs(sessionId: string): Job[] {
    return [...this.jobs.values()].filter((j) => j.sessionId === sessionId && j.command.running);
  }

  /** Running commands (for tests and shutdown). */
  get runningCount(): number {
    return [...this.jobs.values()].filter((j) => j.command.running).length;
  }

  /** Where its commands listen besides the runner's network (the preview lists those servers as unreachable). */
  namespaces(): Promise<ProcNamespace[]> {
    return this.launcher.namespaces?.() ?? Promise.resolve([]);
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    await Promise.all([...this.jobs.values()].map((j) => j.command.stop("killed")));
    for (const job of this.jobs.values()) this.forget(job);
    await this.launcher.dispose();
    if (!this.options.network) await this.network.dispose();
  }
}
