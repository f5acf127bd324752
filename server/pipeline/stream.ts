// A call's output as it streams from the runner (ExecRequest.output): the first `threshold`
// bytes wait in memory; past them a spill is opened and every byte goes to it in pieces, while
// only the head and the tail the model will see are kept here. Memory stays at the threshold
// plus one spill piece, whatever the command prints. A failed spill write is logged, the rest
// is counted but not stored, and the reference is withheld. A spill refused by a bound (the
// session's stored outputs are full, the disk is low: SpillRefused) goes the same way, and the
// model's marker says why the full output was not kept instead of a bare "could not be stored".
import type { StreamedOutput } from "../executors/contract";
import { refusalNote, SpillRefused, type SpillStore, type SpillWriter } from "../services/spills";
import { charStartAtOrBefore, countLines, decode, marker, type Cut, type CutLimits } from "./truncate";
import type { Logger } from "./contract";

// A head or tail boundary may fall inside a character: 4 extra bytes let it be snapped.
const SNAP = 4;
const OVERRUN = 4 * 1024 * 1024;

export class OutputCollector {
  private size = 0;
  private newlines = 0;
  private early: Buffer[] = [];
  private head = Buffer.alloc(0);
  private tail: Buffer[] = [];
  private tailBytes = 0;
  private writer: SpillWriter | undefined;
  private storeError: string | undefined;
  private discarded = false;

  constructor(
    private readonly o: {
      spills: SpillStore;
      sessionId: string;
      toolCallId: string;
      limits: CutLimits;
      log: Logger;
      ceiling: number;
    },
  ) {}

  get ceiling(): number {
    return this.o.ceiling;
  }

  get received(): number {
    return this.size;
  }

  /** Never throws: a storage failure is recorded and the output is still counted. */
  async push(bytes: Uint8Array): Promise<void> {
    // Frames already on their way when the call failed are dropped, not stored in a new spill.
    if (this.discarded) return;
    const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.size += b.length;
    // The runner keeps to the ceiling (plus the tail it holds past it); a runner that does not is not stored.
    if (this.size > this.o.ceiling + OVERRUN && !this.storeError)
      this.fail(new Error(`more than ${this.o.ceiling} bytes arrived, past the ceiling for stored output`));
    for (let i = b.indexOf(10); i !== -1; i = b.indexOf(10, i + 1)) this.newlines++;
    const headCap = this.o.limits.head + SNAP;
    if (this.head.length < headCap) this.head = Buffer.concat([this.head, b.subarray(0, headCap - this.head.length)]);
    this.tail.push(b);
    this.tailBytes += b.length;
    const tailCap = this.o.limits.tail + SNAP;
    if (this.tailBytes > tailCap * 4) this.trimTail();
    if (this.storeError) return;
    if (!this.writer) {
      this.early.push(Buffer.from(b));
      if (this.size <= this.o.limits.threshold) return;
    }
    try {
      if (!this.writer) {
        this.writer = await this.o.spills.open({ sessionId: this.o.sessionId, toolCallId: this.o.toolCallId });
        const early = Buffer.concat(this.early);
        this.early = [];
        await this.writer.append(early);
      } else await this.writer.append(b);
    } catch (e) {
      this.fail(e);
    }
  }

  private trimTail(): void {
    const keep = this.o.limits.tail + SNAP;
    const all = Buffer.concat(this.tail);
    this.tail = [all.subarray(Math.max(0, all.length - keep))];
    this.tailBytes = this.tail[0].length;
  }

  private fail(e: unknown): void {
    this.storeError = e instanceof Error ? e.message : String(e);
    if (e instanceof SpillRefused)
      this.o.log.warn(
        `spill of streamed output for tool call ${this.o.toolCallId} dropped after ${this.size} bytes (${e.reason === "disk" ? "low disk" : "session bound reached"})`,
      );
    else
      this.o.log.error(
        `spill of streamed output for tool call ${this.o.toolCallId} failed after ${this.size} bytes; the reference is withheld`,
        e,
      );
    this.early = [];
    const w = this.writer;
    this.writer = undefined;
    void w?.abort().catch(() => undefined);
  }

  /** Finishes the spill (when one was needed) and says what was kept. */
  async finish(dropped?: StreamedOutput["dropped"]): Promise<StreamedOutput> {
    const base = { size: this.size, newlines: this.newlines, ...(dropped ? { dropped } : {}) };
    if (this.size <= this.o.limits.threshold && !this.storeError) {
      return { ...base, head: new Uint8Array(Buffer.concat(this.early)), tail: new Uint8Array(0) };
    }
    this.trimTail();
    const kept = { ...base, head: new Uint8Array(this.head), tail: new Uint8Array(this.tail[0] ?? Buffer.alloc(0)) };
    if (this.writer && !this.storeError) {
      try {
        const stored = await this.writer.finish();
        return { ...kept, ref: stored.ref };
      } catch (e) {
        this.fail(e);
      }
    }
    return { ...kept, storeError: this.storeError ?? "not stored" };
  }

  /** The call failed or was cancelled: what was written goes. */
  async discard(): Promise<void> {
    this.discarded = true;
    this.early = [];
    const w = this.writer;
    this.writer = undefined;
    await w?.abort().catch(() => undefined);
  }
}

const fmt = (n: number) => n.toLocaleString("en-US");

/** The model-facing text of a streamed output: all of it, or head + marker + tail. */
export function renderStreamed(s: StreamedOutput, limits: CutLimits): { text: string; truncated: boolean } {
  const gap = s.dropped
    ? `[Output bytes ${fmt(s.dropped.from)}–${fmt(s.dropped.to)} (${fmt(s.dropped.to - s.dropped.from)} bytes) were dropped and never stored: ${s.dropped.reason}. ` +
      `What is kept is the ${fmt(s.dropped.from)} bytes before them and the ${fmt(s.size - s.dropped.from)} bytes after them, joined, so offsets in the stored copy past ${fmt(s.dropped.from)} are ${fmt(s.dropped.to - s.dropped.from)} lower than in the output.]`
    : "";
  if (s.tail.length === 0 && s.ref === undefined && s.storeError === undefined) {
    const all = decode(s.head);
    return { text: gap ? `${all}\n${gap}` : all, truncated: Boolean(gap) };
  }
  const headEnd = charStartAtOrBefore(s.head, Math.min(limits.head, s.head.length));
  const tailBase = s.size - s.tail.length;
  const tailIdx = Math.max(
    Math.max(0, headEnd - tailBase),
    charStartAtOrBefore(s.tail, Math.max(0, s.tail.length - limits.tail)),
  );
  const tailStart = tailBase + tailIdx;
  const headNewlines = countLines(s.head, 0, headEnd);
  const tailNewlines = countLines(s.tail, tailIdx);
  const omittedNewlines = Math.max(0, s.newlines - headNewlines - tailNewlines);
  const last = s.tail.length ? s.tail[s.tail.length - 1] : s.head[s.head.length - 1];
  const cut: Cut = {
    headEnd,
    tailStart,
    omittedBytes: tailStart - headEnd,
    omittedLines: [headNewlines + 1, headNewlines + omittedNewlines + 1],
    totalLines: s.newlines + (last === 10 ? 0 : 1),
  };
  let mark = marker(cut, s.size, s.ref, refusalNote(s.storeError));
  if (gap)
    mark = mark
      .replace(/\]\n\n$/, ` ${gap.slice(1, -1)}]\n\n`)
      .replace(
        `The full output (${fmt(s.size)} bytes) is stored`,
        `The output as kept (${fmt(s.size)} bytes) is stored`,
      );
  return { text: decode(s.head.subarray(0, headEnd)) + mark + decode(s.tail.subarray(tailIdx)), truncated: true };
}
