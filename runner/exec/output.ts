// Bounded capture of a command's output between two reads: up to `cap` bytes are kept, as the
// head plus the most recent tail, and the middle is counted, not stored. Text is cut on UTF-8
// character boundaries; an incomplete trailing character waits for the next read.

/** Index just past the last complete UTF-8 character in `buf`. */
export function utf8CompleteEnd(buf: Buffer): number {
  const n = buf.length;
  // A character is at most 4 bytes: look back at most 3 for the start of an unfinished one.
  for (let back = 1; back <= Math.min(3, n); back++) {
    const b = buf[n - back];
    if ((b & 0xc0) === 0x80) continue; // continuation byte
    const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    return need > back ? n - back : n;
  }
  return n;
}

/** Index of the first byte that starts a character (skips leading continuation bytes). */
export function utf8StartIndex(buf: Buffer): number {
  let i = 0;
  while (i < Math.min(3, buf.length) && (buf[i] & 0xc0) === 0x80) i++;
  return i;
}

export interface TakenOutput {
  text: string;
  /** Bytes dropped from the middle of this read. */
  omitted: number;
}

export class OutputBuffer {
  private head: Buffer[] = [];
  private headBytes = 0;
  private tail: Buffer[] = [];
  private tailBytes = 0;
  private omitted = 0;
  /** Everything ever pushed. */
  total = 0;

  constructor(private readonly cap: number) {}

  private get headCap(): number {
    return Math.floor(this.cap * 0.7);
  }

  push(chunk: Buffer): void {
    this.total += chunk.length;
    let rest = chunk;
    if (this.omitted === 0 && this.tailBytes === 0 && this.headBytes < this.headCap) {
      const room = this.headCap - this.headBytes;
      const part = rest.subarray(0, room);
      this.head.push(part);
      this.headBytes += part.length;
      rest = rest.subarray(part.length);
    }
    if (rest.length === 0) return;
    this.tail.push(rest);
    this.tailBytes += rest.length;
    const tailCap = this.cap - this.headCap;
    // Compact only when the tail has grown well past its cap, so trimming stays amortised O(1).
    if (this.tailBytes > tailCap * 2) this.trimTail(tailCap);
  }

  private trimTail(tailCap: number): void {
    if (this.tailBytes <= tailCap) return;
    const all = Buffer.concat(this.tail);
    const drop = all.length - tailCap;
    this.omitted += drop;
    this.tail = [all.subarray(drop)];
    this.tailBytes = tailCap;
  }

  get pending(): number {
    return this.headBytes + this.tailBytes;
  }

  /** Returns what accumulated since the last take and starts over. */
  take(final: boolean): TakenOutput {
    const tailCap = this.cap - this.headCap;
    this.trimTail(tailCap);
    const head = Buffer.concat(this.head);
    const tail = Buffer.concat(this.tail);
    const omitted = this.omitted;
    this.head = [];
    this.headBytes = 0;
    this.tail = [];
    this.tailBytes = 0;
    this.omitted = 0;

    if (omitted === 0) {
      const whole = Buffer.concat([head, tail]);
      const end = final ? whole.length : utf8CompleteEnd(whole);
      const carry = whole.subarray(end);
      if (carry.length > 0) {
        this.head = [Buffer.from(carry)];
        this.headBytes = carry.length;
      }
      return { text: whole.subarray(0, end).toString("utf8"), omitted: 0 };
    }
    const headEnd = utf8CompleteEnd(head);
    const tailStart = utf8StartIndex(tail);
    const tailEnd = final ? tail.length : utf8CompleteEnd(tail);
    const carry = tail.subarray(tailEnd);
    if (carry.length > 0) {
      this.head = [Buffer.from(carry)];
      this.headBytes = carry.length;
    }
    const dropped = omitted + (head.length - headEnd) + tailStart;
    const text =
      head.subarray(0, headEnd).toString("utf8") +
      `\n… [${dropped} bytes of output omitted] …\n` +
      tail.subarray(tailStart, tailEnd).toString("utf8");
    return { text, omitted: dropped };
  }
}
