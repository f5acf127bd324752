// UTF-8 encoding of large tool output in one pass, into a buffer kept between calls.
// Why not Buffer.from(text): it measures the string first (Buffer.byteLength, a full scan), then
// encodes it into freshly allocated memory. On this kind of VM first-touch page faults cost
// ~3 ms per MB, and a fresh buffer per call also left the allocator handing SQLite fresh memory
// for its own copy of the blob: a 1 MB insert ran ~1.5x slower than the same insert from a
// reused buffer. Only small scratches are kept: holding a 10+ MB one had the opposite effect
// (every 10 MB SQLite allocation, ours and the bare baseline's, page-faulted afresh; measured
// with bench/pipeline.bench.ts). The bytes are the same as Buffer.from(text, "utf8") (lone
// surrogates become U+FFFD).

const encoder = new TextEncoder();

/** A scratch buffer above this is dropped after use rather than kept for the next call (see above). */
export const KEEP_MAX_BYTES = 4 << 20;

// One spare buffer; a call that finds it leased (concurrent cuts) allocates its own.
let spare: Buffer | undefined;

function encodeInto(text: string, start: Buffer): { buf: Buffer; length: number } {
  let buf = start;
  const first = encoder.encodeInto(text, buf);
  const read = first.read;
  let written = first.written;
  if (read < text.length) {
    // Each remaining UTF-16 unit needs at most 3 bytes, so this one regrowth always suffices.
    const grown = Buffer.allocUnsafeSlow(written + (text.length - read) * 3);
    buf.copy(grown, 0, 0, written);
    buf = grown;
    // encodeInto never stops inside a surrogate pair, so `read` is a safe place to resume.
    written += encoder.encodeInto(text.slice(read), buf.subarray(written)).written;
  }
  return { buf, length: written };
}

/**
 * Runs `use` on the UTF-8 bytes of `text`. The bytes may live in the reused scratch buffer:
 * `use` must not keep them (or any view of them) once its promise settles.
 */
export async function withUtf8<T>(text: string, use: (bytes: Uint8Array) => Promise<T>): Promise<T> {
  const leased = spare;
  spare = undefined;
  // ASCII-heavy output (the usual case) fits in length + a quarter; the rest regrows once.
  const want = text.length + (text.length >> 2) + 16;
  const { buf, length } = encodeInto(
    text,
    leased && leased.length >= want ? leased : Buffer.allocUnsafeSlow(Math.max(want, leased?.length ?? 0)),
  );
  try {
    return await use(buf.subarray(0, length));
  } finally {
    // Another call may have returned its buffer while this one awaited (TS cannot see that).
    const current = spare as Buffer | undefined;
    if (buf.length <= KEEP_MAX_BYTES && (!current || current.length < buf.length)) spare = buf;
  }
}

/** UTF-8 bytes of `text` in a buffer of their own (for callers that keep the bytes). */
export function encodeUtf8(text: string): Uint8Array {
  const { buf, length } = encodeInto(text, Buffer.allocUnsafeSlow(text.length + (text.length >> 2) + 16));
  return buf.subarray(0, length);
}
