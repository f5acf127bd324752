import { describe, expect, it } from "vitest";
import { pageContentSecurityPolicy } from "./page-csp";

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
