// Cuts a tool result to what the model can afford: head + marker + tail, on UTF-8 character
// boundaries. The marker names the bytes (and lines) left out and, when the full output was
// stored, the reference retrieve_tool_result takes. Pure: storing is spill.ts's job.

export interface CutLimits {
  /** Results longer than this (bytes) are cut. */
  threshold: number;
  head: number;
  tail: number;
}

/** Shell output: first 22K and last 8K past 30,000 bytes. */
export const SHELL_LIMITS: CutLimits = { threshold: 30_000, head: 22_000, tail: 8_000 };
/** A command's output is stored whole up to this many bytes (64 MiB), then only its tail. */
export const DEFAULT_OUTPUT_CEILING = 64 * 1024 * 1024;
/** Any other result: cut past 100 KB, keeping three quarters head, one quarter tail. */
export const TEXT_LIMITS: CutLimits = { threshold: 100_000, head: 75_000, tail: 25_000 };

export interface Cut {
  headEnd: number;
  tailStart: number;
  omittedBytes: number;
  /** 1-based line numbers of the first and last line touched by the omitted range. */
  omittedLines: [number, number];
  totalLines: number;
}

const decoder = new TextDecoder("utf-8", { fatal: false });

export function needsCut(size: number, limits: CutLimits): boolean {
  return size > limits.threshold;
}

/** Moves `i` back to the start of the character it falls in (never splits a sequence). */
export function charStartAtOrBefore(bytes: Uint8Array, i: number): number {
  let j = Math.min(i, bytes.length);
  // At most 3 continuation bytes precede a lead byte; invalid runs are cut where they stand.
  for (let k = 0; k < 3 && j > 0 && j < bytes.length && (bytes[j] & 0xc0) === 0x80; k++) j--;
  return j;
}

export function countLines(bytes: Uint8Array, from = 0, to = bytes.length): number {
  let n = 0;
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let i = buf.indexOf(10, from);
  while (i !== -1 && i < to) {
    n++;
    i = buf.indexOf(10, i + 1);
  }
  return n;
}

export function planCut(bytes: Uint8Array, limits: CutLimits): Cut {
  const headEnd = charStartAtOrBefore(bytes, limits.head);
  const tailStart = Math.max(headEnd, charStartAtOrBefore(bytes, bytes.length - limits.tail));
  const headNewlines = countLines(bytes, 0, headEnd);
  const omittedNewlines = countLines(bytes, headEnd, tailStart);
  const tailNewlines = countLines(bytes, tailStart);
  const totalLines = headNewlines + omittedNewlines + tailNewlines + (bytes[bytes.length - 1] === 10 ? 0 : 1);
  return {
    headEnd,
    tailStart,
    omittedBytes: tailStart - headEnd,
    omittedLines: [headNewlines + 1, headNewlines + omittedNewlines + 1],
    totalLines,
  };
}

export function decode(bytes: Uint8Array): string {
  return decoder.decode(bytes);
}

function fmt(n: number): string {
  return n.toLocaleString("en-US");
}

export function marker(cut: Cut, totalBytes: number, ref: string | undefined, note?: string): string {
  const [a, b] = cut.omittedLines;
  const lines = a === b ? `within line ${fmt(a)}` : `lines ${fmt(a)}–${fmt(b)} of ${fmt(cut.totalLines)}`;
  const where = ref
    ? `The full output (${fmt(totalBytes)} bytes) is stored: call retrieve_tool_result with {"ref":"${ref}","offset":${cut.headEnd},"length":20000} (or a line range or pattern) to read the omitted part.`
    : (note ??
      "The full output could not be stored; rerun with narrower output (filter, head, tail) if you need the omitted part.");
  return `\n\n[… ${fmt(cut.omittedBytes)} bytes omitted (${lines}). ${where}]\n\n`;
}

/** The model-facing text of a cut result. */
export function renderCut(bytes: Uint8Array, cut: Cut, ref: string | undefined, note?: string): string {
  return (
    decode(bytes.subarray(0, cut.headEnd)) +
    marker(cut, bytes.length, ref, note) +
    decode(bytes.subarray(cut.tailStart))
  );
}
