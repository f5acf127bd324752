// Bytes in the browser: a file's or an image's bytes as the base64 the API takes, and a byte
// count as a person reads it (the editor's image preview, the chat's images).

export function base64Of(bytes: Uint8Array): string {
  let binary = "";
  // Chunks: String.fromCharCode with a whole file's bytes as arguments would overflow the stack.
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

/** `900 B`, `2.0 KB`, `3.75 MB` (megabytes to two places, so a limit such as 3.75 shows whole). */
export const sizeLabel = (bytes: number) =>
  bytes < 1024
    ? `${bytes} B`
    : bytes < 1024 * 1024
      ? `${(bytes / 1024).toFixed(1)} KB`
      : `${(bytes / 1024 / 1024).toFixed(2).replace(/\.?0+$/, "")} MB`;
