import { describe, expect, it } from "vitest";
import { PREVIEW_LOCATION } from "../protocol/preview";
import { createInjector, injectable } from "./inject";

/** The body as the browser gets it when the app sends `chunks`. */
function run(chunks: (string | Buffer)[]): { body: string; writes: number[] } {
  const inj = createInjector();
  const out: Buffer[] = [];
  const writes: number[] = [];
  for (const c of chunks) {
    const b = inj.push(Buffer.isBuffer(c) ? c : Buffer.from(c));
    if (b) out.push(b);
    writes.push(out.length);
  }
  const rest = inj.end();
  if (rest) out.push(rest);
  return { body: Buffer.concat(out).toString("latin1"), writes };
}
const script = (body: string) => /<script data-quiver-preview>[\s\S]*?<\/script>/.exec(body)?.[0] ?? "";
const without = (body: string) => body.replace(script(body), "");

describe("the preview's location script", () => {
  it("goes right after the doctype, so the page keeps standards mode", () => {
    const { body } = run(["<!DOCTYPE html>\n<html><head><title>t</title></head><body>hi</body></html>"]);
    expect(body.startsWith("<!DOCTYPE html><script data-quiver-preview>")).toBe(true);
    expect(script(body)).toContain(PREVIEW_LOCATION);
    expect(without(body)).toBe("<!DOCTYPE html>\n<html><head><title>t</title></head><body>hi</body></html>");
  });

  it("waits for a doctype split across chunks, and for leading whitespace, comments and a BOM", () => {
    const split = run(["  <!do", "ctype ht", "ml><p>x</p>"]);
    expect(split.writes).toEqual([0, 0, 1]);
    expect(split.body).toMatch(/^ {2}<!doctype html><script data-quiver-preview>/);
    const commented = run(["<!-- built ", "by x --><!doctype html><p>x"]);
    expect(commented.body).toMatch(/^<!-- built by x --><!doctype html><script data-quiver-preview>/);
    const bom = run([Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from("<!doctype html><p>é</p>")])]);
    expect(bom.body.startsWith("\xEF\xBB\xBF<!doctype html><script")).toBe(true);
  });

  it("goes first (after a BOM) in a page without a doctype, without holding its bytes", () => {
    const { body, writes } = run(["<html><body>old page", "</body></html>"]);
    expect(writes).toEqual([1, 2]);
    expect(body.startsWith("<script data-quiver-preview>")).toBe(true);
    expect(without(body)).toBe("<html><body>old page</body></html>");
  });

  it("holds at most 4 KB looking for a doctype, and leaves what it held intact", () => {
    const comment = `<!-- ${"x".repeat(5000)}`;
    const { body, writes } = run([comment.slice(0, 3000), comment.slice(3000), " --><p>"]);
    expect(writes).toEqual([0, 1, 2]);
    expect(without(body)).toBe(`${comment} --><p>`);
    // A body that ends while still undecided is let go with the script.
    expect(without(run(["<!doc"]).body)).toBe("<!doc");
    expect(run([]).body).toBe("");
  });

  it("leaves UTF-16 pages alone", () => {
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("<!doctype html>", "utf16le")]);
    expect(run([utf16]).body).toBe(utf16.toString("latin1"));
  });

  it("is only for uncompressed HTML with a body", () => {
    const h = (type: string, extra: Record<string, string> = {}) =>
      new Map(Object.entries({ "content-type": type, ...extra }).map(([k, v]) => [k, [v]]));
    expect(injectable(200, h("text/html; charset=utf-8"))).toBe(true);
    expect(injectable(404, h("text/html"))).toBe(true);
    expect(injectable(200, h("text/html", { "content-encoding": "identity" }))).toBe(true);
    expect(injectable(200, h("text/html", { "content-encoding": "gzip" }))).toBe(false);
    expect(injectable(200, h("text/html; charset=UTF-16"))).toBe(false);
    expect(injectable(200, h("application/json"))).toBe(false);
    expect(injectable(304, h("text/html"))).toBe(false);
    expect(injectable(204, h("text/html"))).toBe(false);
    expect(injectable(200, new Map())).toBe(false);
  });
});
