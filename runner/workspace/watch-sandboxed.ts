// The owner of a workspace's watch server (watch-server.ts) in the commands' sandbox: starts it
// through the workspace's helpers, reads its events, and kills it on dispose (the sandbox's
// die-with-parent kills it with the runner). When it dies on its own (killed, out of memory) it is
// started again after a pause that doubles from 1 s to a minute, and once the new one listens the
// workspace hears that track was lost, since what changed in between is unknown. It runs under the
// commands' limits (memory, processes, CPU time), as git does: its memory grows with the folders
// the agent makes, and a server that reaches the limit is killed and started again, never the
// runner or the machine. A server that does not say ready in time is killed and started again
// too: @parcel/watcher blocks for good when it cannot make an inotify instance, and those are
// counted per user across every sandbox, so another workspace's command may hold them all for a
// while (runner/workspace/watch-inotify.test.ts).
import { spawn, type ChildProcess } from "node:child_process";
import { realpathSync } from "node:fs";
import { createInterface } from "node:readline";
import { WatchServerEvent } from "../../server/protocol/watch-server";
import { watchServerFiles, watchServerStart } from "../exec/bundle";
import { boundOnceStarted, sandboxCounts } from "../exec/ns-counts";
import type { Helpers } from "./helpers";
import { WATCH_IGNORE, type WatchSink, type WatchSource } from "./watch";

const FIRST_PAUSE_MS = 1_000;
const LONGEST_PAUSE_MS = 60_000;
/** How long a start may go without `ready`; doubled after each start that ran out of it, so a
 *  tree that merely takes long to crawl still gets there. */
const FIRST_READY_MS = 20_000;
const LONGEST_READY_MS = 640_000;

/** A path the server reported, if it stays inside the workspace (the server's word is checked). */
function relativeInside(path: string): string | undefined {
  if (path.startsWith("/") || path.includes("\0")) return undefined;
  return path.split("/").some((part) => part === "" || part === "." || part === "..") ? undefined : path;
}

export class SandboxedWatch implements WatchSource {
  readonly ready: Promise<boolean>;
  private settleReady!: (listening: boolean) => void;
  private child?: ChildProcess;
  private disposed = false;
  private pauseMs = FIRST_PAUSE_MS;
  private restart?: NodeJS.Timeout;
  private readyTimer?: NodeJS.Timeout;
  private readyMs = FIRST_READY_MS;
  private starts = 0;

  constructor(
    private readonly root: string,
    private readonly helpers: Helpers,
    private readonly sink: WatchSink,
    private readonly log: (line: string) => void,
  ) {
    this.ready = new Promise((resolve) => (this.settleReady = resolve));
    this.launch();
  }

  dispose(): void {
    this.disposed = true;
    clearTimeout(this.restart);
    clearTimeout(this.readyTimer);
    this.child?.kill("SIGKILL");
    this.child = undefined;
    this.settleReady(false);
  }

  private launch(): void {
    const nth = ++this.starts;
    const startedAt = Date.now();
    this.start(nth).catch((err: unknown) => this.ended(nth, `could not start (${(err as Error).message})`, startedAt));
  }

  /** After the server `nth` ended on its own: why, and when it started (to reset the pause). */
  private ended(nth: number, reason: string, startedAt: number): void {
    if (this.disposed) return;
    if (Date.now() - startedAt > LONGEST_PAUSE_MS) this.pauseMs = FIRST_PAUSE_MS;
    this.log(`watch server of ${this.root} ${reason}; again in ${this.pauseMs / 1000} s`);
    if (nth === 1) this.settleReady(false);
    this.restart = setTimeout(() => this.launch(), this.pauseMs);
    this.pauseMs = Math.min(this.pauseMs * 2, LONGEST_PAUSE_MS);
  }

  private async start(nth: number): Promise<void> {
    const start = await watchServerStart(this.log);
    if (this.disposed) return;
    const argv = [process.execPath, ...start.args, this.root, JSON.stringify(WATCH_IGNORE)];
    // Node too, in case it lies in a folder the sandbox masks (Quiver's, or a home).
    const readOnly = [...watchServerFiles(start), realpathSync(process.execPath)];
    const command = this.helpers.spawn(argv, start.bundled ? {} : { TSX_DISABLE_CACHE: "1" }, {
      readOnly,
      limited: true,
    });
    const child = spawn(command.file, command.args, { cwd: command.cwd, env: command.env, stdio: "pipe" });
    this.child = child;
    // One watch per folder of the workspace, which the agent fills: a share of the host's, as a
    // sandbox's (exec/ns-counts.ts), so that past it only this workspace's watcher fails. Written
    // while it starts: its crawl of a folder tree that large takes far longer.
    if (child.pid !== undefined) void boundOnceStarted(child.pid, sandboxCounts(0, false), () => this.child === child);
    const startedAt = Date.now();
    let stderr = "";
    createInterface({ input: child.stdout, crlfDelay: Infinity }).on("line", (line) => {
      if (this.child === child) this.handle(line, nth);
    });
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (text: string) => (stderr = (stderr + text).slice(-2000)));
    child.stdin.on("error", () => undefined);
    let late = false;
    this.readyTimer = setTimeout(() => {
      late = true;
      child.kill("SIGKILL");
    }, this.readyMs);
    const ended = (reason: string) => {
      if (this.child !== child) return;
      this.child = undefined;
      clearTimeout(this.readyTimer);
      if (late) {
        reason = `did not say ready within ${this.readyMs / 1000} s`;
        this.readyMs = Math.min(this.readyMs * 2, LONGEST_READY_MS);
      }
      const tail = stderr.trim().split("\n").slice(-2).join(" | ");
      this.ended(nth, `${reason}${tail ? ` (${tail})` : ""}`, startedAt);
    };
    child.once("error", (err) => ended(`could not start (${err.message})`));
    child.once("close", (code, signal) => ended(`exited (${signal ?? `code ${code}`})`));
  }

  private handle(line: string, nth: number): void {
    let parsed: ReturnType<typeof WatchServerEvent.safeParse>;
    try {
      parsed = WatchServerEvent.safeParse(JSON.parse(line));
    } catch {
      return void this.log(`watch server of ${this.root}: not JSON: ${line.slice(0, 200)}`);
    }
    if (!parsed.success) return void this.log(`watch server of ${this.root}: unknown line: ${line.slice(0, 200)}`);
    const event = parsed.data;
    if (event.type === "ready") {
      clearTimeout(this.readyTimer);
      this.settleReady(true);
      // A server started again missed what changed while none listened.
      if (nth > 1) this.sink.lost();
    } else if (event.type === "lost") this.sink.lost();
    else {
      const paths = event.paths.flatMap((p) => relativeInside(p) ?? []);
      if (paths.length > 0) this.sink.changed(paths);
    }
  }
}
