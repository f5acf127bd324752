import type { IncomingMessage, ServerResponse } from "node:http";
import { describe, expect, it } from "vitest";
import { nonceForPage, pageContentSecurityPolicy } from "./page-csp";

const directives = (csp: string) =>
  new Map(csp.split("; ").map((d) => [d.split(" ")[0], d.split(" ").slice(1)] as [string, string[]]));

describe("the pages' Content-Security-Policy", () => {
  const csp = directives(pageContentSecurityPolicy({ host: "127.0.0.1:3217", dev: false }));

  it("loads images, fonts, connections and workers from this host only", () => {
    expect(csp.get("default-src")).toEqual(["'self'"]);
    expect(csp.get("img-src")).toEqual(["'self'", "data:", "blob:"]);
    expect(csp.get("connect-src")).toEqual(["'self'"]);
    expect(csp.get("font-src")).toEqual(["'self'", "data:"]);
    expect(csp.get("worker-src")).toEqual(["'self'", "blob:"]);
    expect(csp.get("object-src")).toEqual(["'none'"]);
    expect(csp.get("base-uri")).toEqual(["'none'"]);
    expect(csp.get("frame-ancestors")).toEqual(["'self'"]);
    for (const sources of csp.values()) for (const s of sources) expect(s).not.toMatch(/^(\*|https?:|wss?:)$/);
  });

  it("runs no eval outside the dev server", () => {
    expect(csp.get("script-src")).not.toContain("'unsafe-eval'");
    const dev = directives(pageContentSecurityPolicy({ host: "127.0.0.1:3217", dev: true }));
    expect(dev.get("script-src")).toContain("'unsafe-eval'");
  });

  it("runs no inline script: only a page's own nonce lets one run", () => {
    expect(csp.get("script-src")).toEqual(["'self'"]);
    const page = directives(pageContentSecurityPolicy({ host: "127.0.0.1:3217", dev: false, nonce: "AbC+/9==" }));
    expect(page.get("script-src")).toEqual(["'self'", "'nonce-AbC+/9=='"]);
    // A nonce that could close the source list or add one is never written.
    for (const nonce of ["a' 'unsafe-inline", "a; script-src *", "a b", "'", ""]) {
      const forged = directives(pageContentSecurityPolicy({ host: "h", dev: false, nonce }));
      expect(forged.get("script-src")).toEqual(["'self'"]);
    }
  });

  it("gives each page answer a fresh nonce, in the response and in the request Next reads", () => {
    const answer = (clientCsp?: string) => {
      const headers: Record<string, string | undefined> = { host: "127.0.0.1:3217" };
      if (clientCsp) headers["content-security-policy"] = headers["content-security-policy-report-only"] = clientCsp;
      const sent = new Map<string, string>();
      const res = { setHeader: (k: string, v: string) => sent.set(k, v) } as unknown as ServerResponse;
      const nonce = nonceForPage({ headers } as unknown as IncomingMessage, res, false);
      return { nonce, headers, sent: sent.get("content-security-policy") };
    };
    const a = answer();
    const b = answer("script-src 'nonce-chosenbytheclient'");
    expect(a.nonce).not.toBe(b.nonce);
    for (const { nonce, headers, sent } of [a, b]) {
      expect(nonce).toMatch(/^[A-Za-z0-9+/]{24}$/);
      expect(directives(sent!).get("script-src")).toEqual(["'self'", `'nonce-${nonce}'`]);
      expect(headers["content-security-policy"]).toBe(sent);
      expect(headers["content-security-policy-report-only"]).toBeUndefined();
    }
  });

  it("frames the session previews of the host it was asked for", () => {
    expect(csp.get("frame-src")).toContain("*.localhost:3217");
    const named = directives(pageContentSecurityPolicy({ host: "IDE.example.com", dev: false }));
    expect(named.get("frame-src")).toContain("*.ide.example.com");
    const v6 = directives(pageContentSecurityPolicy({ host: "[::1]:80", dev: false }));
    expect(v6.get("frame-src")).toContain("*.localhost:80");
  });

  it("adds no directive from a forged Host header", () => {
    for (const host of ["a; script-src *", "a b", "x.com:1; img-src *", undefined, ""]) {
      const forged = pageContentSecurityPolicy({ host, dev: false });
      expect(forged.split("; ").map((d) => d.split(" ")[0])).toEqual([...csp.keys()]);
      expect(forged).not.toContain("*;");
      expect(directives(forged).get("img-src")).toEqual(["'self'", "data:", "blob:"]);
    }
  });
});
