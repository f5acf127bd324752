// UTF-8 encoding of large tool output in one pass. Why not Buffer.from(text): it measures the
// string first (Buffer.byteLength, a full scan) and then encodes it (a second scan). Encoding
// into a buffer sized from the UTF-16 length skips the measuring pass. The bytes are the same
// as Buffer.from(text, "utf8") (lone surrogates become U+FFFD). A buffer kept between calls was
// tried and dropped: holding 10+ MB made the allocator hand SQLite fresh, page-faulting memory
// for its own copies, which cost more than it saved (bench/pipeline.bench.ts).

const encoder = new TextEncoder();

/** UTF-8 bytes of `text`, encoded once; the result may be a view of a slightly larger buffer. */
export function encodeUtf8(text: string): Uint8Array {
  // ASCII-heavy output (the usual case) fits in length + a quarter; the rest regrows once.
  let buf = Buffer.allocUnsafeSlow(text.length + (text.length >> 2) + 16);
  let { read, written } = encoder.encodeInto(text, buf);
  if (read < text.length) {
    // Each remaining UTF-16 unit needs at most 3 bytes, so this one regrowth always suffices.
    const grown = Buffer.allocUnsafeSlow(written + (text.length - read) * 3);
    buf.copy(grown, 0, 0, written);
    buf = grown;
    // encodeInto never stops inside a surrogate pair, so `read` is a safe place to resume.
    written += encoder.encodeInto(text.slice(read), buf.subarray(written)).written;
  }
  return buf.subarray(0, written);
}
