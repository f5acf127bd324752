// encodeUtf8 must give exactly Buffer.from(text, "utf8"): the spill stores these bytes and
// records their sha256, so any drift (lone surrogates, the regrowth seam) would corrupt spills.
import { describe, expect, it } from "vitest";
import { encodeUtf8, withUtf8 } from "./utf8";

const same = (text: string) => expect(Buffer.from(encodeUtf8(text)).equals(Buffer.from(text, "utf8"))).toBe(true);

describe("encodeUtf8", () => {
  it("matches Buffer.from for ASCII, empty text and NUL", () => {
    same("");
    same("plain ascii\n".repeat(1000));
    same("a\0b\0\0c");
  });

  it("matches Buffer.from when multi-byte text forces the one regrowth", () => {
    // 3-byte characters only: the first buffer (length × 1.25) runs out early.
    same("✓".repeat(50_000));
    same("日本語のテキスト\n".repeat(5000) + "tail");
    // 4-byte pairs straddling every possible seam position.
    for (let pad = 0; pad < 8; pad++) same("x".repeat(pad) + "😀".repeat(3000));
  });

  it("replaces lone surrogates with U+FFFD exactly as Buffer.from does", () => {
    same("a\uD800b");
    same("\uDC00" + "✓".repeat(10_000) + "\uD83D");
    same("✓".repeat(7) + "\uD83D" + "x".repeat(3));
  });

  it("returns a view sized to the bytes written", () => {
    const bytes = encodeUtf8("héllo");
    expect(bytes.byteLength).toBe(6);
    expect(Buffer.from(bytes).toString("utf8")).toBe("héllo");
  });

  it("matches Buffer.from on random mixes of 1- to 4-byte characters and surrogate halves", () => {
    const pool = ["a", "\n", "\0", "é", "✓", "😀", "\uD800", "\uDFFF", "日"];
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff);
    for (let round = 0; round < 50; round++) {
      let s = "";
      const n = next() % 4000;
      for (let i = 0; i < n; i++) s += pool[next() % pool.length];
      same(s);
    }
  });
});

describe("withUtf8", () => {
  it("hands each concurrent caller its own bytes, and reuses the scratch afterwards", async () => {
    const texts = ["first ✓ ".repeat(20_000), "second 😀 ".repeat(15_000), "third\0".repeat(30_000)];
    const seen = await Promise.all(
      texts.map((t) =>
        withUtf8(t, async (bytes) => {
          await new Promise((r) => setTimeout(r, 5));
          return Buffer.from(bytes);
        }),
      ),
    );
    seen.forEach((b, i) => expect(b.equals(Buffer.from(texts[i], "utf8"))).toBe(true));
    // A shorter text after a longer one: the reused buffer's stale tail must not leak in.
    const again = await withUtf8("short", async (bytes) => Buffer.from(bytes));
    expect(again.toString("utf8")).toBe("short");
  });
});
