// A file's bytes as text for an operation that writes the text back (the editor, edit_file,
// apply_patch): only when they are UTF-8. Decoding other bytes replaces them with U+FFFD, and
// writing the result back would destroy them. A BOM is kept, so it is written back as it was.
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** The text, or undefined when the bytes are not valid UTF-8. */
export function utf8Text(data: Uint8Array): string | undefined {
  try {
    return utf8.decode(data);
  } catch {
    return undefined;
  }
}
