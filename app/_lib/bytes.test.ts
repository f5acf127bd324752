// Bytes in the browser: base64 of a large buffer in one piece, and sizes as a person reads them.
import { describe, expect, it } from "vitest";
import { ATTACHMENT_LIMITS } from "../../server/protocol/attachments";
import { base64Of, sizeLabel } from "./bytes";

describe("bytes", () => {
  it("encodes large images without overflowing the stack, and labels sizes as the tree does", () => {
    const big = new Uint8Array(3 * 1024 * 1024).map((_, i) => i % 251);
    expect(base64Of(big)).toBe(Buffer.from(big).toString("base64"));
    expect([
      sizeLabel(900),
      sizeLabel(2048),
      sizeLabel(ATTACHMENT_LIMITS.maxImageBytes),
      sizeLabel(5 * 1024 * 1024),
    ]).toEqual(["900 B", "2.0 KB", "3.75 MB", "5 MB"]);
  });
});
