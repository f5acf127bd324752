// A file's bytes as text: binary files are told apart as git does (a NUL in the first 8000
// bytes), and an operation that writes the text back (the editor, edit_file, apply_patch) takes
// it only when the bytes are UTF-8. Decoding other bytes replaces them with U+FFFD, and
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

/** A NUL in the first 8000 bytes, git's test for a binary file. */
export const looksBinary = (data: Uint8Array): boolean => data.subarray(0, 8000).includes(0);
