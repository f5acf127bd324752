// The whole output of one command, for the server's spill: every byte up to the ceiling goes to
// an anonymous temp file (unlinked as soon as it is opened, so no command can find it by name),
// and past the ceiling only the most recent `tailKeep` bytes are held in memory. A call reads a
// byte range of it back in pieces; what fell between the kept head and the kept tail is reported
// as dropped, exactly. Memory stays at one piece plus the tail, whatever the command prints.
import { closeSync, mkdtempSync, openSync, readSync, rmSync, unlinkSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const SPOOL_PIECE = 64 * 1024;
export const SPOOL_TAIL_KEEP = 1024 * 1024;

export interface SpoolRange {
  from: number;
  to: number;
  /** Output offsets inside [from, to) that were not kept: past the ceiling, or the disk refused them. */
  dropped?: { from: number; to: number; reason: string };
}

export class OutputSpool {
  /** Bytes the command printed. */
  total = 0;
  private fd: number | undefined;
  /** Bytes [0, filed) are in the file. */
  private filed = 0;
  private closed = false;
  private stopReason: string | undefined;
  private ring: Buffer[] = [];
  private ringBytes = 0;

  constructor(
    readonly ceiling: number,
    private readonly tailKeep = SPOOL_TAIL_KEEP,
  ) {}

  push(chunk: Buffer): void {
    if (this.closed) return;
    const start = this.total;
    this.total += chunk.length;
    let rest = chunk;
    if (this.stopReason === undefined && start < this.ceiling) {
      const part = rest.subarray(0, this.ceiling - start);
      if (this.write(part)) rest = rest.subarray(part.length);
    }
    if (this.stopReason === undefined && this.filed >= this.ceiling)
      this.stopReason = `past the ceiling of ${this.ceiling} bytes for stored output`;
    if (rest.length === 0) return;
    this.ring.push(Buffer.from(rest));
    this.ringBytes += rest.length;
    // Trimmed only once well past the limit, so keeping the tail stays amortised O(1).
    if (this.ringBytes > this.tailKeep * 2) this.trimRing();
  }

  private write(part: Buffer): boolean {
    try {
      if (this.fd === undefined) {
        const dir = mkdtempSync(join(tmpdir(), "quiver-spool-"));
        const file = join(dir, "out");
        this.fd = openSync(file, "wx+", 0o600);
        unlinkSync(file);
        rmSync(dir, { recursive: true, force: true });
      }
      let done = 0;
      while (done < part.length) done += writeSync(this.fd, part, done, part.length - done, this.filed + done);
      this.filed += part.length;
      return true;
    } catch (e) {
      this.stopReason = `the runner could not keep it on disk (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`;
      return false;
    }
  }

  private trimRing(): void {
    if (this.ringBytes <= this.tailKeep) return;
    const all = Buffer.concat(this.ring);
    this.ring = [all.subarray(all.length - this.tailKeep)];
    this.ringBytes = this.tailKeep;
  }

  /** Output offset of the first byte held in memory. */
  private get ringStart(): number {
    return this.total - this.ringBytes;
  }

  /** Where [from, to) stands: what is kept and what was dropped. */
  describe(from: number, to: number): SpoolRange {
    this.trimRing();
    const gapFrom = Math.max(from, this.filed);
    const gapTo = Math.min(to, Math.max(this.filed, this.ringStart));
    if (gapTo <= gapFrom) return { from, to };
    return { from, to, dropped: { from: gapFrom, to: gapTo, reason: this.stopReason ?? "not kept" } };
  }

  /** The kept bytes of [from, to), in order, one piece at a time. */
  async *read(from: number, to: number): AsyncGenerator<Buffer> {
    this.trimRing();
    const ringStart = this.ringStart;
    const ring = Buffer.concat(this.ring);
    for (let at = from; at < Math.min(to, this.filed) && this.fd !== undefined;) {
      const piece = Buffer.allocUnsafe(Math.min(SPOOL_PIECE, Math.min(to, this.filed) - at));
      const n = readSync(this.fd, piece, 0, piece.length, at);
      if (n <= 0) break;
      at += n;
      yield piece.subarray(0, n);
    }
    const ringFrom = Math.max(from, this.filed, ringStart);
    for (let at = ringFrom; at < to; at += SPOOL_PIECE) {
      yield ring.subarray(at - ringStart, Math.min(to, at + SPOOL_PIECE) - ringStart);
    }
  }

  dispose(): void {
    this.closed = true;
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
    this.ring = [];
    this.ringBytes = 0;
  }
}
