// Address classification and URL checks of the SSRF guard (no network involved).
import { describe, expect, it } from "vitest";
import { checkUrl } from "./fetch";
import { checkAddresses, FetchRefused, forbiddenAddress } from "./guard";

describe("forbiddenAddress", () => {
  it.each([
    ["127.0.0.1", "loopback"],
    ["127.255.0.9", "loopback"],
    ["10.1.2.3", "private"],
    ["172.16.0.1", "private"],
    ["192.168.1.1", "private"],
    ["169.254.169.254", "linkLocal"],
    ["100.64.0.1", "carrierGradeNat"],
    ["224.0.0.1", "multicast"],
    ["0.0.0.0", "unspecified"],
    ["255.255.255.255", "broadcast"],
    ["240.0.0.1", "reserved"],
    ["192.0.2.1", "reserved"],
    ["::1", "loopback"],
    ["::", "unspecified"],
    ["fe80::1", "linkLocal"],
    ["fe80::1%eth0", "linkLocal"],
    ["fc00::1", "uniqueLocal"],
    ["fd12:3456::1", "uniqueLocal"],
    ["ff02::1", "multicast"],
    ["2001:db8::1", "reserved"],
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:10.0.0.1", "private"],
    ["::ffff:169.254.169.254", "linkLocal"],
    ["64:ff9b::7f00:1", "loopback"],
    ["64:ff9b::a9fe:a9fe", "linkLocal"],
    ["64:ff9b:1::a00:1", "local NAT64"],
    ["2002:7f00:1::", "loopback"],
    ["2002:c0a8:101::1", "private"],
    ["::7f00:1", "IPv4-compatible"],
    ["2001::1", "teredo"],
  ])("refuses %s (%s)", (address, why) => {
    expect(forbiddenAddress(address)).toContain(why);
  });

  it.each([
    "8.8.8.8",
    "93.184.216.34",
    "1.1.1.1",
    "2606:4700::1111",
    "2a00:1450:4001::200e",
    "::ffff:8.8.8.8",
    "64:ff9b::808:808",
  ])("allows public %s", (address) => {
    expect(forbiddenAddress(address)).toBeNull();
  });
});

describe("checkUrl", () => {
  const refused = (url: string, rules = {}) => {
    expect(() => checkUrl(url, rules)).toThrow(FetchRefused);
  };

  it.each([
    "http://127.0.0.1/",
    "http://127.1/",
    "http://2130706433/",
    "http://0x7f.0.0.1/",
    "http://0177.0.0.1/",
    "http://017700000001/",
    "http://127.0.0.1./",
    "http://%31%32%37.0.0.1/",
    "http://[::ffff:127.0.0.1]/",
    "http://[0:0:0:0:0:ffff:7f00:1]/",
    "http://[::1]:8080/",
    "http://[::]/",
    "http://0/",
    "http://169.254.169.254/latest/meta-data/",
    "http://[fd00::1]/",
    "http://10.0.0.1:3000/",
    "http://100.100.100.200/",
  ])("refuses the address spelling %s", (url) => refused(url));

  it.each([
    "http://localhost/",
    "http://LOCALHOST./",
    "http://app.localhost/",
    "http://metadata.google.internal/",
    "http://metadata/",
    "http://instance-data/",
  ])("refuses the local or metadata name %s", (url) => refused(url));

  it.each([
    "file:///etc/passwd",
    "ftp://example.com/",
    "gopher://example.com/",
    "data:text/plain,hi",
    "javascript:alert(1)",
    "not a url",
  ])("refuses %s", (url) => refused(url));

  it("refuses credentials in the URL", () => refused("http://user:pw@example.com/"));

  it("applies allow and deny lists", () => {
    expect(checkUrl("https://docs.example.com/x", { allowHosts: ["*.example.com"] }).hostname).toBe("docs.example.com");
    refused("https://example.org/", { allowHosts: ["*.example.com"] });
    refused("https://evil.example.com/", { denyHosts: ["evil.example.com"] });
    refused("https://a.b.evil.com/", { denyHosts: ["*.evil.com"] });
    refused("http://8.8.8.8/", { denyHosts: ["8.8.0.0/16"] });
    expect(checkUrl("http://8.8.8.8/", {}).hostname).toBe("8.8.8.8");
  });
});

describe("checkAddresses", () => {
  it("refuses a name when any of its addresses is forbidden", () => {
    expect(() =>
      checkAddresses(
        "mixed.test",
        [
          { address: "8.8.8.8", family: 4 },
          { address: "127.0.0.1", family: 4 },
        ],
        {},
      ),
    ).toThrow(/127\.0\.0\.1/);
    expect(() => checkAddresses("none.test", [], {})).toThrow(/did not resolve/);
  });

  it("lets an explicitly allowed private host through, but never its denied addresses", () => {
    const rules = { allowPrivateHosts: ["fixture.test"], denyHosts: ["10.0.0.0/8"] };
    expect(() => checkAddresses("fixture.test", [{ address: "127.0.0.1", family: 4 }], rules)).not.toThrow();
    expect(() => checkAddresses("fixture.test", [{ address: "10.1.1.1", family: 4 }], rules)).toThrow(/deny list/);
    expect(() => checkAddresses("other.test", [{ address: "127.0.0.1", family: 4 }], rules)).toThrow(/loopback/);
  });
});
