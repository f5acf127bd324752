// The pieces of sign-in without a server: signed values refuse any change, the cookie key is
// created once (owner-only file) and kept, a sign-in URL is printed at once only when the
// server listens beyond loopback, and who a request is follows the documented order.
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { IncomingMessage } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { loadSecret, sign, verify } from "./crypto";
import { createAuth } from ".";
import { createIdentify, isLoopbackAddress } from "./identity";

const dirs: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), "quiver-auth-unit-"));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const owner = { userId: "u1", orgId: "o1", role: "owner" as const };
const noLinks = {
  checkLink: async () => ({ ok: false as const, reason: "unknown" as const }),
  resolveToken: async () => ({ ok: false as const, reason: "unknown" as const }),
  ended: async () => [],
};
const req = (remoteAddress: string, headers: Record<string, string> = {}) =>
  ({ socket: { remoteAddress }, headers }) as unknown as IncomingMessage;

describe("sign-in pieces", () => {
  it("signs values so that any change, or another key, is refused", () => {
    const key = loadSecret(tempDir());
    const value = sign(key, ["view", "sl1", "s1"]);
    expect(verify(key, value, 3)).toEqual(["view", "sl1", "s1"]);
    expect(verify(key, value.replace("sl1", "sl2"), 3)).toBeNull();
    expect(verify(key, value.slice(0, -1) + (value.endsWith("A") ? "B" : "A"), 3)).toBeNull();
    expect(verify(key, value, 2)).toBeNull();
    expect(verify(loadSecret(tempDir()), value, 3)).toBeNull();
    expect(() => sign(key, ["a.b"])).toThrow(/dot-free/);
  });

  it("keeps one cookie key per data folder, readable by its owner only", () => {
    const dir = tempDir();
    const a = loadSecret(dir);
    expect(loadSecret(dir).equals(a)).toBe(true);
    expect(statSync(join(dir, "cookie-secret")).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(dir, "cookie-secret"), "utf8").trim()).toBe(a.toString("base64url"));
  });

  it("prints the sign-in URL at start only when listening beyond loopback", () => {
    for (const [HOST, printed] of [
      ["0.0.0.0", true],
      ["127.0.0.1", false],
      ["::1", false],
    ] as const) {
      const logs: string[] = [];
      const auth = createAuth({
        env: { dataDir: tempDir(), HOST, QUIVER_ALLOWED_HOSTS: ["ide.example.com"] },
        owner,
        shares: noLinks,
        log: (l) => logs.push(l),
      });
      auth.listening(4000);
      expect(logs.some((l) => /http:\/\/ide\.example\.com:4000\/signin\?token=[A-Za-z0-9_-]{32}$/.test(l))).toBe(
        printed,
      );
      auth.dispose();
    }
  });

  it("counts loopback only when no proxy header says otherwise", async () => {
    expect(["127.0.0.1", "127.3.2.1", "::1", "::ffff:127.0.0.1"].every(isLoopbackAddress)).toBe(true);
    expect(["10.0.0.1", "::ffff:10.0.0.1", "128.0.0.1", undefined].some(isLoopbackAddress)).toBe(false);
    const identify = createIdentify({ key: loadSecret(tempDir()), owner, shares: noLinks });
    expect((await identify(req("127.0.0.1"))).kind).toBe("owner");
    for (const h of ["forwarded", "x-forwarded-for", "x-real-ip"])
      expect((await identify(req("127.0.0.1", { [h]: "203.0.113.9" }))).kind).toBe("anonymous");
    expect((await identify(req("192.0.2.10"))).kind).toBe("anonymous");
  });
});
