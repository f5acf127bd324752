// The person's terminals: node-pty sessions running a login shell in the workspace, sandboxed
// and led as pty-start.ts starts them. Input is written by pty-input.ts and
// acknowledged (pty.ack) once written or dropped, so the server can keep it bounded; input held
// here past INPUT_CAP (a server that ignores acks) is dropped, and the terminal says so; an
// interrupt key the server sends ahead of input still on its way (pty.interrupt) is answered
// by pty-input.ts. Output is windowed (pty-output.ts) when the server acknowledges it (pty.open's
// outputWindow, pty.drained): past the window the PTY is not read and its program blocks. Closing
// kills the PTY's whole process tree. When the server connection drops, PTYs wait `graceMs`
// for a `pty.open` with the same id to re-attach (output meanwhile is kept and replayed), then
// close; the server's own terminal bridge handles a browser that went away, and says whether a
// page shows a terminal (pty.watched): at maxPtys, the one unseen longest is closed to make room
// for a new one (its pty.exit says reclaimedAfterMs); one a page shows never is. A terminal without
// network has a namespace of its own, recorded at start so the preview can name a server there.
import type { IPty } from "node-pty";
import { PTY_INPUT_WINDOW } from "../../server/protocol/runner";
import type { PtyHandler, PtyMessage } from "../ops";
import { killTree } from "./kill";
import { WorkspaceNetwork, type SandboxNetwork } from "./netns";
import type { ProcNamespace } from "./procfs";
import { vanishedCover } from "./host-sockets";
import { boundOnceStarted, sandboxCounts } from "./ns-counts";
import { PtyInput } from "./pty-input";
import { PtyOutput } from "./pty-output";
import { pickSpare, runsProgram } from "./pty-spare";
import {
  missingNetwork,
  signalName,
  startTerminal,
  terminalNamespace,
  watchLimits,
  type PtyOptions,
  type StartedTerminal,
} from "./pty-start";

export type { PtyOptions };

interface Entry {
  id: string;
  sessionId: string;
  pty: IPty;
  marker: string;
  /** Output not yet delivered (sent while disconnected), replayed on re-attach. */
  backlog: string;
  grace?: NodeJS.Timeout;
  closing: boolean;
  /** Resolves when the PTY's process (the session's leader) has exited. */
  exited: Promise<void>;
  /** Its network namespace, when it runs sandboxed without network (recordNamespace). */
  namespace?: ProcNamespace;
  /** Output held back while it may be bwrap's own failure to start (see `open`). */
  held?: string;
  /** Input typed meanwhile, for the shell that does start (a terminal would echo it). */
  typed?: string;
  /** UTF-8 bytes of `typed`. */
  typedBytes: number;
  /** Writes input to the PTY master and counts what is written (absent: node-pty's own write). */
  input?: PtyInput;
  /** Bytes written or dropped, not yet reported in a pty.ack (sent once per turn of the loop). */
  acked: number;
  /** The terminal was told once that input past the runner's cap was dropped. */
  dropNoted?: boolean;
  /** Output windowing (pty-output.ts), when the server acknowledges output (pty.open's outputWindow). */
  output?: PtyOutput;
  /** Since when no page shows it (pty.watched false, or the server connection lost); absent: one does. */
  unwatchedAt?: number;
  /** A program ran in it (foreground or background) when it was last left unseen (pty-spare.ts). */
  runsProgram?: boolean;
  /** Closed to make room for another terminal after this long unwatched: said in its pty.exit. */
  reclaimedAfterMs?: number;
  /**
   * Whether the PTY master's descriptor is still open. node-pty closes it once the terminal's
   * other side is gone, well before onExit: its number may then name another terminal or file.
   */
  masterOpen: () => boolean;
}

/**
 * node-pty's read stream of a new master could not be made (the number was closed under it):
 * the start is tried once more, as a new terminal (its orphan is killed by its own marker).
 */
const MASTER_LOST = /TTY initialization failed|Could not set master fd/;
function startOrRetry(start: () => StartedTerminal): StartedTerminal {
  try {
    return start();
  } catch (err) {
    if (!MASTER_LOST.test((err as Error).message)) throw err;
    return start();
  }
}

/** Sizes the terminal while its master is open; a failed ioctl (the terminal just ended) is moot. */
function resize(entry: Entry, size: { cols: number; rows: number }): void {
  if (!entry.masterOpen()) return;
  try {
    entry.pty.resize(size.cols, size.rows);
  } catch {
    // gone meanwhile: its exit follows
  }
}

/**
 * Input held per terminal past which frames are dropped (and acknowledged): the server keeps
 * PTY_INPUT_WINDOW, plus one frame; only a server that ignores pty.ack gets here.
 */
const INPUT_CAP = 4 * PTY_INPUT_WINDOW;

/** How long a terminal's first output may be held back as maybe bwrap's start failure. */
const HOLD_MS = 2_000;
const BWRAP = "bwrap: ";
const mayBeBwrapError = (text: string) => BWRAP.startsWith(text) || text.startsWith(BWRAP);

export class PtyManager implements PtyHandler {
  private readonly ptys = new Map<string, Entry>();
  /** Foregrounds of terminals just left unseen, being read (pty-spare.ts). */
  private readonly readings = new Set<Promise<void>>();
  private connected = true;
  // node-pty (a native addon) loads in the background so it never delays the runner's start;
  // frames that arrive before it is ready wait here, in order.
  private nodePty: typeof import("node-pty") | undefined;
  private early: PtyMessage[] | undefined = [];
  private loadError: string | undefined;
  private readonly net: WorkspaceNetwork;
  private disposed = false;

  constructor(private readonly o: PtyOptions) {
    this.net =
      o.workspaceNetwork ?? new WorkspaceNetwork({ sandboxed: o.sandbox.available, hostNetwork: false, log: () => {} });
    import("node-pty")
      .then((m) => (this.nodePty = m))
      .catch((e: Error) => (this.loadError = `node-pty is unavailable: ${e.message}`))
      .finally(() => this.release());
  }

  /** Handles the frames that waited, in order. */
  private release(): void {
    const queued = this.early ?? [];
    this.early = undefined;
    for (const m of queued) this.handle(m);
  }

  handle(message: PtyMessage): void {
    if (this.early) {
      this.early.push(message);
      return;
    }
    const entry = this.ptys.get(message.ptyId);
    switch (message.type) {
      case "pty.open": {
        if (entry) return this.reattach(entry, message);
        // The workspace's network namespace may have to be made first: later frames wait for it.
        const wanted = this.o.network ?? true;
        if (!this.o.sandbox.available || !wanted) return this.open(message, { network: wanted });
        this.early = [];
        void this.net
          .sandboxNetwork(true)
          .then((net) => this.open(message, net))
          .finally(() => this.release());
        return;
      }
      case "pty.input":
        return this.input(entry, message.ptyId, message.data);
      case "pty.resize":
        if (entry && !entry.closing) resize(entry, message);
        return;
      case "pty.drained":
        entry?.output?.drained(message.chars);
        return;
      case "pty.interrupt": {
        const answer = (skipped: boolean) =>
          void this.o.send({ type: "pty.interrupted", ptyId: message.ptyId, skipped });
        // Not started yet (input is held): the key goes in order. Its byte is acknowledged either way.
        if (!entry?.input || entry.closing || entry.held !== undefined) {
          answer(false);
          return void (entry ? this.ack(entry, 1) : this.o.send({ type: "pty.ack", ptyId: message.ptyId, bytes: 1 }));
        }
        return entry.input.interrupt(message.key.charCodeAt(0), answer);
      }
      case "pty.close":
        if (entry) void this.close(entry);
        else this.refuse(message.ptyId, "not open");
        return;
      case "pty.watched":
        if (!entry) return;
        if (message.watched) entry.unwatchedAt = undefined;
        else this.leftUnseen(entry, Date.now());
        return;
    }
  }

  private input(entry: Entry | undefined, ptyId: string, data: string): void {
    const bytes = Buffer.byteLength(data, "utf8");
    if (bytes === 0) return;
    // Input for a terminal that is gone is dropped, and said to be done with.
    if (!entry || entry.closing) return void this.o.send({ type: "pty.ack", ptyId, bytes });
    if ((entry.input?.pending ?? 0) + entry.typedBytes + bytes > INPUT_CAP) {
      if (!entry.dropNoted)
        this.deliver(entry, "\r\n\x1b[33mquiver: input dropped: the terminal is not reading it\x1b[0m\r\n");
      entry.dropNoted = true;
      return this.ack(entry, bytes);
    }
    if (entry.held === undefined) return this.write(entry, data);
    entry.typed = (entry.typed ?? "") + data;
    entry.typedBytes += bytes;
  }

  private write(entry: Entry, data: string): void {
    if (entry.input) return entry.input.write(data);
    entry.pty.write(data);
    this.ack(entry, Buffer.byteLength(data, "utf8"));
  }

  /** Reports bytes written (or dropped), gathered into one frame per turn of the event loop. */
  private ack(entry: Entry, bytes: number): void {
    if (entry.acked === 0)
      setImmediate(() => {
        const n = entry.acked;
        entry.acked = 0;
        if (n > 0) this.o.send({ type: "pty.ack", ptyId: entry.id, bytes: n });
      });
    entry.acked += bytes;
  }

  /** Typed input held while the terminal's start was uncertain is given to its shell, or dropped. */
  private untype(entry: Entry, to: Entry | undefined): void {
    const { typed, typedBytes } = entry;
    entry.typed = undefined;
    entry.typedBytes = 0;
    if (!typed) return;
    if (to && !to.closing) this.write(to, typed);
    else this.ack(entry, typedBytes);
  }

  /** The terminal did not start, or is not open: said as its exit. */
  private refuse(ptyId: string, why: string): void {
    this.o.send({ type: "pty.exit", ptyId, exitCode: null, signal: why });
  }

  /**
   * Starts the terminal. A host socket removed between the sandbox's listing and bwrap's mount
   * over it fails bwrap's start (host-sockets.ts): the terminal's first output is held while it
   * may be that error, and the terminal is started once more instead of showing it.
   */
  private open(m: Extract<PtyMessage, { type: "pty.open" }>, net: SandboxNetwork, again?: { from: Entry }): void {
    const room = !this.disposed && this.makeRoom();
    // A start that does not happen drops what was typed for it.
    if (again && !room) this.untype(again.from, undefined);
    if (this.disposed) return this.refuse(m.ptyId, "the runner is shutting down");
    if (!room) return this.refuse(m.ptyId, "too many terminals are open");
    let started: StartedTerminal;
    try {
      if (!this.nodePty) throw new Error(this.loadError ?? "node-pty is not loaded");
      started = startOrRetry(() => startTerminal(this.nodePty!, this.o, net, m));
    } catch (e) {
      if (again) this.untype(again.from, undefined);
      return this.refuse(m.ptyId, `failed to start: ${(e as Error).message}`);
    }
    const { pty, marker, jail, masterFd } = started;
    let ended = () => {};
    const exited = new Promise<void>((resolve) => (ended = resolve));
    const entry: Entry = {
      id: m.ptyId,
      sessionId: m.sessionId,
      pty,
      marker,
      backlog: "",
      closing: false,
      exited,
      typedBytes: 0,
      acked: 0,
      masterOpen: started.masterStream ? () => !started.masterStream!.destroyed : () => true,
    };
    if (m.outputWindow) entry.output = new PtyOutput(pty, m.outputWindow, pty.pid);
    if (masterFd !== undefined) {
      // The slave's path tells what an interrupt key means.
      entry.input = new PtyInput(
        masterFd,
        (n) => this.ack(entry, n),
        { path: started.slavePath, leader: pty.pid },
        entry.masterOpen,
      );
      // node-pty's read stream closes the master when the terminal's other side is gone (before
      // onExit; `once` is that stream's): no write may follow, as the descriptor's number may
      // already name another file.
      (pty as unknown as NodeJS.EventEmitter).once("close", () => entry.input?.end());
    }
    this.ptys.set(entry.id, entry);
    const release = () => {
      const { held } = entry;
      entry.held = undefined;
      if (held) this.deliver(entry, held);
      this.untype(entry, entry);
    };
    if (again) this.untype(again.from, entry);
    if (this.o.sandbox.available && !again) {
      entry.held = "";
      setTimeout(release, HOLD_MS).unref();
    }
    const without = missingNetwork(this.o.network ?? true, net, this.net);
    if (without && this.o.sandbox.available && !again)
      this.deliver(entry, `\x1b[33mquiver: this terminal has ${without}\x1b[0m\r\n`);
    if (!net.network && this.o.sandbox.available) void this.recordNamespace(entry);
    // The shell waits for these (pty-start.ts).
    if (this.o.sandbox.available)
      void boundOnceStarted(pty.pid, sandboxCounts(this.o.limits?.processes ?? 0, false), () => this.live(entry));
    pty.onData((data) => {
      if (entry.held === undefined) return this.deliver(entry, data);
      entry.held += data;
      if (!mayBeBwrapError(entry.held)) release();
    });
    const watch = watchLimits(jail, (text) => this.deliver(entry, text));
    pty.onExit(({ exitCode, signal }) => {
      ended();
      clearInterval(watch);
      clearTimeout(entry.grace);
      this.ptys.delete(entry.id);
      // The shell is gone; anything it left running in the background goes with it.
      void killTree(undefined, entry.marker).then(() => jail?.dispose());
      if (entry.held !== undefined && !entry.closing && vanishedCover(entry.held, started.sandboxArgs)) {
        // This start's hold timer must not show its error (or type into it) once the next one runs.
        entry.held = undefined;
        entry.input?.end();
        return this.open(m, net, { from: entry });
      }
      this.untype(entry, undefined); // for no shell now
      entry.input?.end();
      entry.output?.end();
      release();
      this.o.send({
        type: "pty.exit",
        ptyId: entry.id,
        exitCode,
        ...(signalName(signal) ? { signal: signalName(signal) } : {}),
        ...(entry.reclaimedAfterMs !== undefined ? { reclaimedAfterMs: entry.reclaimedAfterMs } : {}),
      });
    });
  }

  /**
   * True when another terminal may start. At the limit, one no page shows is closed for it (its
   * pty.exit says so; which one: pty-spare.ts); one that a page shows is never taken, and the
   * ones already closing do not count.
   */
  private makeRoom(): boolean {
    const live = [...this.ptys.values()].filter((e) => !e.closing);
    if (live.length < (this.o.maxPtys ?? 32)) return true;
    const spare = pickSpare(live);
    if (spare?.unwatchedAt === undefined) return false;
    spare.reclaimedAfterMs = Math.max(0, Date.now() - spare.unwatchedAt);
    void this.close(spare);
    return true;
  }

  /** No page shows the terminal from `at` on (kept if already unseen); whether a program runs
   *  in it then is read for makeRoom. */
  private leftUnseen(entry: Entry, at: number): void {
    if (entry.unwatchedAt !== undefined) return;
    entry.unwatchedAt = at;
    entry.runsProgram = undefined;
    const reading = runsProgram(entry.marker).then((busy) => {
      if (entry.unwatchedAt === at) entry.runsProgram = busy;
    });
    this.readings.add(reading);
    void reading.finally(() => this.readings.delete(reading));
  }

  /** Until whether programs run in the unseen terminals has been read (tests). */
  async programsRead(): Promise<void> {
    await Promise.all(this.readings);
  }

  /** Records the network namespace bubblewrap unshared for the terminal (pty-start.ts terminalNamespace). */
  private async recordNamespace(entry: Entry): Promise<void> {
    const found = await terminalNamespace(entry.pty.pid, () => this.live(entry));
    if (found) entry.namespace = found;
  }

  private live(entry: Entry): boolean {
    return !entry.closing && this.ptys.get(entry.id) === entry;
  }

  /** The network namespaces of the open terminals that run without network. */
  namespaces(): ProcNamespace[] {
    return [...this.ptys.values()].flatMap((e) => (e.namespace && !e.closing ? [e.namespace] : []));
  }

  private deliver(entry: Entry, data: string): void {
    const counted = entry.output ? { counted: true as const } : {};
    if (!entry.backlog && this.o.send({ type: "pty.data", ptyId: entry.id, data, ...counted })) {
      entry.output?.sent(data.length);
      return;
    }
    const cap = this.o.scrollbackChars ?? 256 * 1024;
    entry.backlog = (entry.backlog + data).slice(-cap);
  }

  private reattach(entry: Entry, m: Extract<PtyMessage, { type: "pty.open" }>): void {
    if (entry.sessionId !== m.sessionId || entry.closing) return; // an id is never shared across sessions
    clearTimeout(entry.grace);
    entry.grace = undefined;
    entry.unwatchedAt = undefined; // a page opens it, as at its start
    resize(entry, m);
    // The server that counted what was sent is gone: the new one starts from nothing outstanding.
    if (m.outputWindow) {
      if (entry.output) entry.output.reset(m.outputWindow);
      else entry.output = new PtyOutput(entry.pty, m.outputWindow, entry.pty.pid);
    } else {
      entry.output?.end();
      entry.output = undefined;
    }
    const backlog = entry.backlog;
    entry.backlog = "";
    if (backlog) this.deliver(entry, backlog);
  }

  /**
   * Kills the PTY's process tree; its onExit reports pty.exit. The session's leader is asked
   * first (launch.ts ttyLeader): it kills the namespace before it hangs anything up, so the
   * shell never runs a line queued behind its command. The tree is killed after it, or if it
   * does not end.
   */
  private async close(entry: Entry): Promise<void> {
    if (entry.closing) return;
    entry.closing = true;
    clearTimeout(entry.grace);
    entry.output?.end();
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 2000);
      entry.exited.then(() => {
        clearTimeout(timer);
        resolve();
      });
      try {
        process.kill(entry.pty.pid, "SIGTERM");
      } catch {
        resolve();
      }
    });
    await killTree(entry.pty.pid, entry.marker);
  }

  connectionChanged(connected: boolean): void {
    const was = this.connected;
    this.connected = connected;
    if (connected || !was) return;
    const graceMs = this.o.graceMs ?? 30_000;
    const now = Date.now();
    for (const entry of this.ptys.values()) {
      entry.grace ??= setTimeout(() => void this.close(entry), graceMs);
      this.leftUnseen(entry, now);
    }
  }

  /** Open PTYs (tests, diagnostics). */
  get size(): number {
    return this.ptys.size;
  }

  /** Input bytes held for the PTY, not yet written to it (tests, diagnostics). */
  pendingInput(ptyId: string): number | undefined {
    const entry = this.ptys.get(ptyId);
    return entry && (entry.input?.pending ?? 0) + entry.typedBytes;
  }

  /** Output characters sent and not yet acknowledged, and whether the PTY is paused (tests, diagnostics). */
  pendingOutput(ptyId: string): { unacked: number; paused: boolean } | undefined {
    const output = this.ptys.get(ptyId)?.output;
    return output && { unacked: output.unacked, paused: output.isPaused };
  }

  pid(ptyId: string): number | undefined {
    return this.ptys.get(ptyId)?.pty.pid;
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    await Promise.all([...this.ptys.values()].map((e) => this.close(e)));
    if (!this.o.workspaceNetwork) await this.net.dispose();
  }
}
