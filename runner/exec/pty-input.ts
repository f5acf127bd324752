// A terminal's input, written to the PTY master by the runner itself rather than by node-pty's
// write(): node-pty queues without bound and says nothing when bytes reach the kernel, so the
// server could not be told to send more (pty.ack) and a paste into a program that does not read
// would sit in the runner's memory. Here every byte written (or dropped once the PTY is gone) is
// reported, in order, and a full PTY buffer is retried with a growing pause instead of node-pty's
// setImmediate spin.
import { write } from "node:fs";

/** Longest pause between tries while the PTY's buffer is full (the program is not reading). */
const MAX_RETRY_MS = 50;

export class PtyInput {
  private readonly queue: Buffer[] = [];
  /** Bytes of queue[0] already written. */
  private offset = 0;
  private writing = false;
  private retryMs = 0;
  private timer?: NodeJS.Timeout;
  private ended = false;
  /** Bytes queued, not yet written. */
  pending = 0;

  constructor(
    private readonly fd: number,
    /** Called with each count of bytes written or dropped, in order. */
    private readonly done: (bytes: number) => void,
  ) {}

  write(data: string): void {
    const bytes = Buffer.from(data, "utf8");
    if (bytes.length === 0) return;
    if (this.ended) return this.done(bytes.length);
    this.queue.push(bytes);
    this.pending += bytes.length;
    this.pump();
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
    this.offset = this.pending = 0;
    if (lost > 0) this.done(lost);
  }

  private pump(): void {
    if (this.writing || this.ended || this.timer || this.queue.length === 0) return;
    this.writing = true;
    const head = this.queue[0];
    write(this.fd, head, this.offset, head.length - this.offset, null, (err, n) => {
      this.writing = false;
      if (this.ended) return;
      if (err) {
        if (err.code === "EAGAIN" || err.code === "EWOULDBLOCK" || err.code === "EINTR") {
          // The program is not reading: wait a little longer each time rather than spin.
          this.retryMs = Math.min(MAX_RETRY_MS, Math.max(1, this.retryMs * 2));
          this.timer = setTimeout(() => {
            this.timer = undefined;
            this.pump();
          }, this.retryMs);
          return;
        }
        // EIO and the like: the terminal's other side is gone; nothing more can be written.
        this.ended = true;
        return this.drop();
      }
      this.retryMs = 0;
      this.offset += n;
      this.pending -= n;
      if (this.offset >= head.length) {
        this.queue.shift();
        this.offset = 0;
      }
      if (n > 0) this.done(n);
      this.pump();
    });
  }
}
