// A terminal's input, written to the PTY master by the runner itself rather than by node-pty's
// write(): node-pty queues without bound and says nothing when bytes reach the kernel, so the
// server could not be told to send more (pty.ack) and a paste into a program that does not read
// would sit in the runner's memory. Here every byte written (or dropped once the PTY is gone) is
// reported, in order, and a full PTY buffer is retried with a growing pause instead of node-pty's
// setImmediate spin. An interrupt key (^C, ^\, ^Z) typed while input waits does what the line
// discipline does in ISIG mode: the input ahead of it is dropped and the key goes first, or, when
// even it cannot be written, its signal goes to the foreground process group (pty-interrupt.ts).
// Writes are synchronous (the master is non-blocking: a full buffer is EAGAIN at once) and each
// asks first whether the master is still open: node-pty closes it when its stream is destroyed,
// before the 'close' that ends this input, and a write queued on libuv's threadpool, or made in
// between, would go to whatever file took the descriptor's number next.
import { writeSync } from "node:fs";
import { foregroundGroup, INTERRUPT_KEYS, interruptAt, keyMeaning, type KeyMeaning } from "./pty-interrupt";

/** Longest pause between tries while the PTY's buffer is full (the program is not reading). */
const MAX_RETRY_MS = 50;

/** The terminal's slave path and its session leader, for what an interrupt key means there. */
export interface PtyTty {
  path?: string;
  leader: number;
}

export class PtyInput {
  private queue: Buffer[] = [];
  /** While an interrupt key's meaning is asked: the key, then what was typed after it. */
  private held?: Buffer[];
  /** The server's question about the held key (`interrupt`), answered once its meaning is known. */
  private verdict?: (skipped: boolean) => void;
  /** Interrupts sent out of band while another key's meaning is asked, in order. */
  private readonly later: Array<() => void> = [];
  /** Bytes of queue[0] already written. */
  private offset = 0;
  private retryMs = 0;
  private timer?: NodeJS.Timeout;
  private ended = false;
  /** Bytes queued, not yet written. */
  pending = 0;

  constructor(
    private readonly fd: number,
    /** Called with each count of bytes written or dropped, in order. */
    private readonly done: (bytes: number) => void,
    /** Absent: interrupt keys wait in line like any input. */
    private readonly tty?: PtyTty,
    /** Whether `fd` is still the master (false once node-pty has closed it). */
    private readonly masterOpen: () => boolean = () => true,
  ) {}

  write(data: string): void {
    const bytes = Buffer.from(data, "utf8");
    if (bytes.length === 0) return;
    if (this.ended) return this.done(bytes.length);
    this.pending += bytes.length;
    if (this.held) return void this.held.push(bytes);
    const at = this.tty && this.pending > bytes.length ? interruptAt(bytes) : -1;
    if (at < 0) {
      this.queue.push(bytes);
      return this.pump();
    }
    // Input waits ahead of an interrupt key: what the key means decides whether it skips it.
    if (at > 0) this.queue.push(bytes.subarray(0, at));
    this.held = [bytes.subarray(at, at + 1), ...(at + 1 < bytes.length ? [bytes.subarray(at + 1)] : [])];
    this.ask(bytes[at]);
  }

  /**
   * Out of band: `key` was typed after input that is still on its way here. `verdict(true)`: it
   * skipped the queue (the terminal signals on it, and what waited was dropped); false: it was
   * not written, and its copy in the input stream is typed in order.
   */
  interrupt(key: number, verdict: (skipped: boolean) => void): void {
    if (this.ended || !this.tty) {
      this.done(1); // the server counted it; its in-band copy is typed instead
      return verdict(false);
    }
    if (this.held) return void this.later.push(() => this.interrupt(key, verdict));
    this.pending += 1;
    this.held = [Buffer.from([key])];
    this.verdict = verdict;
    this.ask(key);
  }

  private ask(key: number): void {
    void keyMeaning(this.tty!.path, key).then((meaning) => this.settle(meaning));
  }

  /** False, and what is queued dropped, once the master is closed. */
  private stillOpen(): boolean {
    if (this.ended) return false;
    if (this.masterOpen()) return true;
    this.ended = true;
    clearTimeout(this.timer);
    this.drop();
    return false;
  }

  private settle(meaning: KeyMeaning): void {
    const [key, ...after] = this.held ?? [];
    const verdict = this.verdict;
    this.held = this.verdict = undefined;
    if (this.ended || !key) {
      verdict?.(false);
      return this.next();
    }
    if (meaning === "byte") {
      if (verdict) {
        // Not written here: the server types it once what was typed before it has come.
        this.pending -= 1;
        this.done(1);
        verdict(false);
        this.queue.push(...after);
      } else this.queue.push(key, ...after);
      this.pump();
      return this.next();
    }
    verdict?.(true);
    if (!this.stillOpen()) return this.next();
    // The line discipline's flush on an interrupt: what was typed before the key is dropped.
    const before = this.pending - key.length - after.reduce((n, b) => n + b.length, 0);
    clearTimeout(this.timer);
    this.timer = undefined;
    this.queue = after;
    this.offset = 0;
    this.pending -= before;
    if (before > 0) this.done(before);
    this.pending -= 1;
    try {
      writeSync(this.fd, key);
      this.done(1);
    } catch {
      // The tty's input is full even so: send what the key stands for, where the tty would.
      if (meaning === "signal") {
        this.done(1);
        void this.signal(key[0]);
      } else {
        this.queue.unshift(key);
        this.pending += 1;
      }
    }
    this.retryMs = 0;
    this.pump();
    this.next();
  }

  private next(): void {
    if (!this.held) this.later.shift()?.();
  }

  private async signal(key: number): Promise<void> {
    const group = this.tty && (await foregroundGroup(this.tty.leader));
    const signal = INTERRUPT_KEYS.get(key)?.signal;
    if (!group || !signal || this.ended) return;
    try {
      process.kill(-group, signal);
    } catch {
      // the group is gone already
    }
  }

  /** The PTY is gone: what is queued is dropped (and reported, so no window stays shut). */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    clearTimeout(this.timer);
    this.drop();
  }

  private drop(): void {
    const lost = this.pending;
    this.queue.length = 0;
    this.held = undefined;
    this.offset = this.pending = 0;
    if (lost > 0) this.done(lost);
  }

  private pump(): void {
    while (!this.timer && !this.held && this.queue.length > 0 && this.stillOpen()) {
      const head = this.queue[0];
      let n: number;
      try {
        n = writeSync(this.fd, head, this.offset, head.length - this.offset);
        // Nothing taken and no error: as full (never loop on it).
        if (n === 0) throw Object.assign(new Error("nothing written"), { code: "EAGAIN" });
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code !== "EAGAIN" && code !== "EWOULDBLOCK" && code !== "EINTR") {
          // EIO and the like: the terminal's other side is gone; nothing more can be written.
          this.ended = true;
          return this.drop();
        }
        // The program is not reading: wait a little longer each time rather than spin.
        this.retryMs = Math.min(MAX_RETRY_MS, Math.max(1, this.retryMs * 2));
        this.timer = setTimeout(() => {
          this.timer = undefined;
          this.pump();
        }, this.retryMs);
        return;
      }
      this.retryMs = 0;
      this.offset += n;
      this.pending -= n;
      if (this.offset >= head.length) {
        this.queue.shift();
        this.offset = 0;
      }
      this.done(n);
    }
  }
}
