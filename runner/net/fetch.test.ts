// fetch_url end to end against a real HTTP server on 127.0.0.1. Names resolve through a test
// resolver (never real DNS); only `fixture.test` and `fixture2.test` are allowed to be private.
import { spawnSync } from "node:child_process";
import { createServer, type IncomingMessage, type Server } from "node:http";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { FetchResultMeta } from "../../server/protocol/exec-ops";
import type { FetchOptions } from "./fetch";
import { createFetchOp } from "./fetch-op";
import type { Resolver } from "./guard";

let server: Server;
let port: number;
const hits: string[] = [];
const lookups: string[] = [];

const names: Record<string, string[]> = {
  "fixture.test": ["127.0.0.1"],
  "fixture2.test": ["127.0.0.1"],
  "evil.test": ["127.0.0.1"],
  "evil6.test": ["::1"],
  "mapped.test": ["::ffff:127.0.0.1"],
  "meta.test": ["169.254.169.254"],
  "mixed.test": ["93.184.216.34", "127.0.0.1"],
};
const resolver: Resolver = async (host) => {
  lookups.push(host);
  const addrs = names[host];
  if (!addrs) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" });
  return addrs.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
};
const base: FetchOptions = { resolver, allowPrivateHosts: ["fixture.test", "fixture2.test"] };

function handle(req: IncomingMessage, res: import("node:http").ServerResponse) {
  const url = new URL(req.url ?? "/", "http://x");
  hits.push(`${req.headers.host}${url.pathname}`);
  const to = url.searchParams.get("to");
  switch (url.pathname) {
    case "/page":
      res.setHeader("content-type", "text/html; charset=utf-8");
      return res.end(`<html><head><title>Fixture &amp; Co</title><script>alert(1)</script></head>
        <body><h1>Hello</h1><p>World &lt;3 <a href="/next">next page</a></p><ul><li>one</li><li>two</li></ul></body></html>`);
    case "/redirect":
      res.writeHead(302, { location: to ?? "/page" });
      return res.end();
    case "/chain": {
      const n = Number(url.searchParams.get("n"));
      res.writeHead(301, { location: n > 0 ? `/chain?n=${n - 1}` : "/page" });
      return res.end();
    }
    case "/headers":
      res.setHeader("content-type", "application/json");
      return res.end(JSON.stringify({ authorization: req.headers.authorization ?? null, accept: req.headers.accept }));
    case "/secret":
      return res.end("SECRET");
    case "/big":
      return res.end("x".repeat(5000));
    case "/bomb":
      res.setHeader("content-encoding", "gzip");
      res.setHeader("content-type", "text/plain");
      return res.end(gzipSync(Buffer.alloc(6 * 1024 * 1024, "a")));
    case "/latin1":
      res.setHeader("content-type", "text/plain; charset=iso-8859-1");
      return res.end(Buffer.from([0x63, 0x61, 0x66, 0xe9]));
    case "/binary":
      res.setHeader("content-type", "image/png");
      return res.end(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0]));
    case "/missing":
      res.writeHead(404, { "content-type": "text/plain" });
      return res.end("nothing here");
    case "/hang":
      return; // never answers
  }
  res.writeHead(500);
  res.end();
}

beforeAll(async () => {
  server = createServer(handle);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  port = (server.address() as { port: number }).port;
});
afterAll(() => {
  server.closeAllConnections();
  server.close();
});
beforeEach(() => {
  hits.length = 0;
  lookups.length = 0;
});

const fetchUrl = async (url: string, options: FetchOptions = base, headers?: Record<string, string>) => {
  const op = createFetchOp(options);
  const r = await op.run({ url, headers }, { signal: new AbortController().signal } as never);
  return r;
};
const at = (host: string, path: string) => `http://${host}:${port}${path}`;

describe("fetch_url against a local server", () => {
  it("fetches the allowed test host and turns HTML into text", async () => {
    const r = await fetchUrl(at("fixture.test", "/page"));
    expect(r.ok).toBe(true);
    expect(r.output).toContain("Title: Fixture & Co");
    expect(r.output).toContain("# Hello");
    expect(r.output).toContain(`World <3 next page (http://fixture.test:${port}/next)`);
    expect(r.output).toContain("- one\n- two");
    expect(r.output).not.toContain("alert");
    const meta = FetchResultMeta.parse(r.meta);
    expect(meta).toMatchObject({ network: true, status: 200, truncated: false });
    expect(lookups).toEqual(["fixture.test"]);
  });

  it.each([
    ["127.0.0.1", "/secret"],
    ["127.1", "/secret"],
    ["2130706433", "/secret"],
    ["0x7f.0.0.1", "/secret"],
    ["[::ffff:127.0.0.1]", "/secret"],
    ["[::1]", "/secret"],
    ["evil.test", "/secret"],
    ["evil6.test", "/secret"],
    ["mapped.test", "/secret"],
    ["meta.test", "/secret"],
    ["mixed.test", "/secret"],
    ["localhost", "/secret"],
  ])("refuses %s before any byte reaches the server", async (host, path) => {
    const r = await fetchUrl(at(host, path));
    expect(r.ok).toBe(false);
    expect(r.output).toMatch(/^Refused: /);
    expect(r.meta).toMatchObject({ network: true, refused: true });
    expect(hits).toEqual([]);
  });

  it.each([
    `http://127.0.0.1:PORT/secret`,
    `http://2130706433:PORT/secret`,
    `http://[::ffff:127.0.0.1]:PORT/secret`,
    `http://evil.test:PORT/secret`,
    `http://meta.test:PORT/secret`,
    `file:///etc/passwd`,
  ])("never reaches %s through a redirect from the allowed host", async (target) => {
    const to = encodeURIComponent(target.replace("PORT", String(port)));
    const r = await fetchUrl(at("fixture.test", `/redirect?to=${to}`));
    // A forbidden address or scheme is refused; a name, resolved only at connect time, is another
    // host, which is reported and not followed.
    if (/evil|meta/.test(target)) expect(r.output).toMatch(/Redirected to another host, not followed/);
    else {
      expect(r.ok).toBe(false);
      expect(r.output).toMatch(/^Refused: /);
    }
    expect(hits).toEqual([`fixture.test:${port}/redirect`]);
  });

  it("follows up to 5 redirects by hand, checking each hop, and refuses a sixth", async () => {
    const ok = await fetchUrl(at("fixture.test", "/chain?n=4"));
    expect(ok.ok).toBe(true);
    expect(FetchResultMeta.parse(ok.meta).redirects).toHaveLength(5);
    expect(lookups).toHaveLength(6);
    const tooMany = await fetchUrl(at("fixture.test", "/chain?n=5"));
    expect(tooMany.output).toMatch(/more than 5 redirects/);
  });

  it("reports a redirect to another host instead of following it, and sends it no credentials", async () => {
    const same = await fetchUrl(at("fixture.test", "/headers"), base, { Authorization: "Bearer abc" });
    expect(same.output).toContain('"authorization":"Bearer abc"');
    // The org's policy judged fixture.test; fixture2.test could be a host it denies.
    for (const target of [at("fixture2.test", "/headers"), at("FIXTURE2.test.", "/headers")]) {
      hits.length = 0;
      const to = encodeURIComponent(target);
      const cross = await fetchUrl(at("fixture.test", `/redirect?to=${to}`), base, { Authorization: "Bearer abc" });
      expect(cross.ok).toBe(true);
      expect(cross.output).toContain(`Redirected to another host, not followed: ${new URL(target).toString()}`);
      expect(cross.output).toMatch(/call fetch_url again with that URL/);
      expect(FetchResultMeta.parse(cross.meta)).toMatchObject({ status: 302, notFollowed: new URL(target).toString() });
      expect(hits).toEqual([`fixture.test:${port}/redirect`]);
    }
    // The same host by another spelling is the same host: followed.
    const to = encodeURIComponent(at("FIXTURE.test", "/headers"));
    const back = await fetchUrl(at("fixture.test", `/redirect?to=${to}`), base, { Authorization: "Bearer abc" });
    expect(back.output).toContain('"authorization":"Bearer abc"');
  });

  it("applies the allow list and deny list to the test host too", async () => {
    expect((await fetchUrl(at("fixture.test", "/page"), { ...base, allowHosts: ["docs.test"] })).output).toMatch(
      /not on the allow list/,
    );
    expect((await fetchUrl(at("fixture.test", "/page"), { ...base, denyHosts: ["127.0.0.0/8"] })).output).toMatch(
      /deny list/,
    );
    expect(hits).toEqual([]);
  });

  it("caps the body, after decompression", async () => {
    const small = await fetchUrl(at("fixture.test", "/big"), { ...base, maxBodyBytes: 1000 });
    expect(FetchResultMeta.parse(small.meta)).toMatchObject({ bytes: 1000, truncated: true });
    const bomb = await fetchUrl(at("fixture.test", "/bomb"));
    expect(FetchResultMeta.parse(bomb.meta)).toMatchObject({ bytes: 5 * 1024 * 1024, truncated: true });
    expect(bomb.output).toContain("Truncated:");
  });

  it("times out a server that never answers", async () => {
    const r = await fetchUrl(at("fixture.test", "/hang"), { ...base, timeoutMs: 300 });
    expect(r.ok).toBe(false);
    expect(r.output).toMatch(/timed out/);
  });

  it("decodes by charset, withholds binary, and reports HTTP errors as failures with the body", async () => {
    expect((await fetchUrl(at("fixture.test", "/latin1"))).output).toContain("café");
    const bin = await fetchUrl(at("fixture.test", "/binary"));
    expect(bin.output).toContain("Binary content (image/png, 7 bytes) is not shown.");
    const missing = await fetchUrl(at("fixture.test", "/missing"));
    expect(missing.ok).toBe(false);
    expect(missing.output).toContain("Status: 404");
    expect(missing.output).toContain("nothing here");
  });

  it("reports unresolvable names clearly", async () => {
    const r = await fetchUrl(at("nowhere.test", "/"));
    expect(r.ok).toBe(false);
    expect(r.output).toMatch(/ENOTFOUND/);
  });
});

// The host's own public address reaches whatever it binds on 0.0.0.0, from the host itself. A
// public address is given to `lo` for the test (root only), so no real host on it is reached.
describe.runIf(process.getuid?.() === 0)("fetch_url and the runner host's own addresses", () => {
  const own = "44.0.0.7"; // globally routable unicast: only the own-address rule refuses it
  let wide: Server;
  let widePort: number;
  const addrs = (op: "add" | "del") =>
    spawnSync("ip", ["addr", op, `${own}/32`, "dev", "lo"], { encoding: "utf8" }).status === 0;
  let added = false;
  beforeAll(async () => {
    added = addrs("add");
    wide = createServer((_req, res) => res.end("host-service"));
    await new Promise<void>((r) => wide.listen(0, "0.0.0.0", r));
    widePort = (wide.address() as { port: number }).port;
  });
  afterAll(() => {
    if (added) addrs("del");
    wide.close();
  });

  it("refuses it by name, by literal address and after a redirect, though it is public", async (ctx) => {
    if (!added) return ctx.skip();
    expect(await (await fetch(`http://${own}:${widePort}/`)).text()).toBe("host-service"); // it does answer
    names["own.test"] = [own];
    try {
      for (const url of [
        `http://own.test:${widePort}/`,
        `http://${own}:${widePort}/`,
        `http://[::ffff:${own}]:${widePort}/`,
      ]) {
        const r = await fetchUrl(url);
        expect(r.ok, url).toBe(false);
        expect(r.output, url).toMatch(/runner host's own address/);
        expect(r.output).not.toContain("host-service");
      }
      const r = await fetchUrl(at("fixture.test", `/redirect?to=${encodeURIComponent(`http://${own}:${widePort}/`)}`));
      expect(r.output).not.toContain("host-service");
    } finally {
      delete names["own.test"];
    }
  });
});
