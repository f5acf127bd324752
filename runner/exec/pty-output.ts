// A terminal's output window on the runner. node-pty reads the PTY master as fast as the kernel
// fills it; without a bound, `yes` in a terminal whose pages read slowly would pile its output up
// in the runner's socket to the server and in the server. Here the characters sent and not yet
// acknowledged by the server (pty.drained) are counted, and past the window the PTY is no longer
// read (node-pty's pause(): its read stream stops at its high-water mark), so the kernel's PTY
// buffer fills and the program blocks on write, as on a real terminal with a slow line. Reading
// goes on once half the window is acknowledged.
import { readFileSync } from "node:fs";

/** How often a paused terminal checks that its program still runs (see `watch`). */
const ALIVE_CHECK_MS = 100;

export interface Pausable {
  pause(): void;
  resume(): void;
}

export class PtyOutput {
  /** Characters sent in counted frames and not yet acknowledged. */
  unacked = 0;
  private paused = false;
  private timer?: NodeJS.Timeout;
  private over = false;

  constructor(
    private readonly pty: Pausable,
    private window: number,
    /** The PTY's process (its leader): once it is gone, what it left in the PTY is read regardless. */
    private readonly pid: number,
  ) {}

  get isPaused(): boolean {
    return this.paused;
  }

  /** `chars` were sent in a counted frame. */
  sent(chars: number): void {
    if (this.over) return;
    this.unacked += chars;
    if (this.unacked >= this.window && !this.paused) {
      this.paused = true;
      this.pty.pause();
      this.watch();
    }
  }

  /** The server passed `chars` more on (pty.drained). */
  drained(chars: number): void {
    // More acknowledged than sent cannot open the window wider than it is.
    this.unacked = Math.max(0, this.unacked - chars);
    if (this.paused && this.unacked <= this.window / 2) this.resume();
  }

  /** A new server connection took the terminal over: nothing it knows of is outstanding. */
  reset(window: number): void {
    this.window = window;
    this.unacked = 0;
    if (this.paused) this.resume();
  }

  /** The terminal is ending: read the rest (the kernel's buffer; it is bounded) and stop counting. */
  end(): void {
    this.over = true;
    clearTimeout(this.timer);
    if (this.paused) this.resume();
  }

  private resume(): void {
    this.paused = false;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.pty.resume();
  }

  /**
   * node-pty destroys its read stream 200 ms after the PTY's process exits unless it has read the
   * end by then: a paused stream never does, and the program's last output would be lost. While
   * paused, the process is looked at now and then; once it has exited, reading resumes.
   */
  private watch(): void {
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (!this.paused) return;
      if (alive(this.pid)) return this.watch();
      this.end();
    }, ALIVE_CHECK_MS);
    this.timer.unref();
  }
}

/** False once the process has exited (reaped, or a zombie waiting for node-pty to reap it). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}
