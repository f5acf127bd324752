// The key per-address bounds count under: one client's spellings and its whole IPv6 /64 share
// one, so rotating the low bits of an IPv6 address buys no fresh sign-in or socket budget.
import { describe, expect, it } from "vitest";
import { addressKey } from "./address-key";

describe("addressKey", () => {
  it("counts every address of one IPv6 /64 as one, whatever its spelling", () => {
    const key = addressKey("2001:db8:1:2::1");
    for (const same of ["2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:0DB8:0001:0002:0:0:0:9", "2001:db8:1:2::1%eth0"])
      expect(addressKey(same)).toBe(key);
    expect(key).toBe("2001:db8:1:2::/64");
    expect(addressKey("2001:db8:1:3::1")).not.toBe(key);
  });

  it("counts an IPv4 client as itself, through a dual-stack socket too", () => {
    expect(addressKey("203.0.113.7")).toBe("203.0.113.7");
    expect(addressKey("::ffff:203.0.113.7")).toBe("203.0.113.7");
    expect(addressKey("::ffff:cb00:7107")).toBe("203.0.113.7");
    expect(addressKey("203.0.113.8")).not.toBe("203.0.113.7");
  });

  it("puts what is not an address under one key", () => {
    for (const odd of [undefined, "", "unknown", "1.2.3", "::g", "x".repeat(10_000)])
      expect(addressKey(odd)).toBe("unknown");
  });
});
