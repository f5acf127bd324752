// The SSRF guard of fetch_url: which hosts may be named and which addresses may be connected to.
// Addresses are classified with ipaddr.js: only globally routable unicast passes, and IPv6 forms
// that embed an IPv4 address (mapped, NAT64, 6to4) are judged by the address they embed, and
// none of the runner host's own addresses passes, public ones included: a request there comes
// from the host itself to whatever it binds on 0.0.0.0.
import { lookup as dnsLookup } from "node:dns/promises";
import { isIP } from "node:net";
import { networkInterfaces } from "node:os";
import ipaddr from "ipaddr.js";

export class FetchRefused extends Error {
  readonly code = "EFETCHREFUSED";
  constructor(message: string) {
    super(message);
    this.name = "FetchRefused";
  }
}

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Name resolution, injectable so tests never touch real DNS. */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolver: Resolver = async (hostname) =>
  (await dnsLookup(hostname, { all: true, verbatim: true })).map((a) => ({
    address: a.address,
    family: a.family === 6 ? 6 : 4,
  }));

export interface HostRules {
  /** When non-empty, only these hosts may be fetched. Entries: `example.com`, `*.example.com`. */
  allowHosts?: readonly string[];
  /** Never fetched. Entries: host names, `*.suffix`, IP addresses or CIDR ranges. */
  denyHosts?: readonly string[];
  /**
   * Host names exempt from the address check (an internal docs server; the tests' fixture host).
   * Names only: a URL that spells an address itself is always checked.
   */
  allowPrivateHosts?: readonly string[];
}

// Cloud metadata services and names that always mean this machine.
const ALWAYS_DENIED = [
  "localhost",
  "*.localhost",
  "metadata",
  "metadata.google.internal",
  "metadata.goog",
  "instance-data",
  "instance-data.ec2.internal",
  "metadata.azure.internal",
  "metadata.oraclecloud.com",
  "metadata.packet.net",
];

export const normaliseHost = (host: string) =>
  host
    .replace(/^\[|\]$/g, "")
    .replace(/\.$/, "")
    .toLowerCase();

function hostMatches(host: string, pattern: string): boolean {
  const p = normaliseHost(pattern);
  if (p.startsWith("*.")) return host.endsWith(p.slice(1));
  if (p.includes("/") && isIP(host)) {
    try {
      const [range, bits] = ipaddr.parseCIDR(p);
      const addr = ipaddr.parse(host);
      return addr.kind() === range.kind() && addr.match(range, bits);
    } catch {
      return false;
    }
  }
  return host === p;
}

/** Refuses a URL host by name before anything is resolved. */
export function checkHostName(hostname: string, rules: HostRules): void {
  const host = normaliseHost(hostname);
  if (ALWAYS_DENIED.some((p) => hostMatches(host, p))) throw new FetchRefused(`${host} is a local or metadata host`);
  if (rules.denyHosts?.some((p) => hostMatches(host, p))) throw new FetchRefused(`${host} is on the deny list`);
  if (rules.allowHosts?.length && !rules.allowHosts.some((p) => hostMatches(host, p))) {
    throw new FetchRefused(`${host} is not on the allow list`);
  }
}

export function isPrivateAllowed(hostname: string, rules: HostRules): boolean {
  const host = normaliseHost(hostname);
  return !isIP(host) && (rules.allowPrivateHosts ?? []).some((p) => hostMatches(host, p));
}

const v4FromParts = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);

/** Why connecting to `address` is refused, or null when it is public unicast. */
export function forbiddenAddress(address: string): string | null {
  let ip: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    ip = ipaddr.parse(normaliseHost(address).replace(/%.*$/, ""));
  } catch {
    return "not an IP address";
  }
  if (ip.kind() === "ipv4") {
    const range = (ip as ipaddr.IPv4).range();
    return range === "unicast" ? null : range;
  }
  const v6 = ip as ipaddr.IPv6;
  const range = v6.range();
  const p = v6.parts;
  const embedded = (v4: ipaddr.IPv4) => {
    const inner = forbiddenAddress(v4.toString());
    return inner === null ? null : `${range} form of ${v4.toString()} (${inner})`;
  };
  if (range === "ipv4Mapped" || range === "rfc6145") return embedded(v4FromParts(p[6], p[7]));
  if (range === "rfc6052") {
    // Only the well-known NAT64 prefix (64:ff9b::/96) embeds a public address; the local-use one is private.
    return p[2] === 0 && p[3] === 0 && p[4] === 0 && p[5] === 0 ? embedded(v4FromParts(p[6], p[7])) : "local NAT64";
  }
  if (range === "6to4") return embedded(v4FromParts(p[1], p[2]));
  // IPv4-compatible (::a.b.c.d, deprecated) is classified "unicast" by ipaddr.js: never routable.
  if (range !== "unicast") return range;
  return p.slice(0, 6).every((x) => x === 0) ? "IPv4-compatible (deprecated)" : null;
}

/** The host's own addresses, read at each check: they change (DHCP, a VPN coming up). */
function isOwnAddress(ip: ipaddr.IPv4 | ipaddr.IPv6): boolean {
  const text = ip.toString();
  return Object.values(networkInterfaces()).some((list) =>
    (list ?? []).some((a) => {
      try {
        return ipaddr.process(a.address.replace(/%.*$/, "")).toString() === text;
      } catch {
        return false;
      }
    }),
  );
}

/** Why connecting to `address` is refused (forbiddenAddress, or the host's own), or null. */
export function forbiddenPeer(address: string): string | null {
  const why = forbiddenAddress(address);
  if (why !== null) return why;
  return isOwnAddress(ipaddr.process(normaliseHost(address).replace(/%.*$/, ""))) ? "runner host's own" : null;
}

/** Throws unless every address is allowed (a mixed answer is refused whole). */
export function checkAddresses(hostname: string, addresses: readonly ResolvedAddress[], rules: HostRules): void {
  if (addresses.length === 0) throw new FetchRefused(`${hostname} did not resolve to any address`);
  const privateOk = isPrivateAllowed(hostname, rules);
  for (const a of addresses) {
    if (rules.denyHosts?.some((p) => hostMatches(normaliseHost(a.address), p))) {
      throw new FetchRefused(`${hostname} resolves to ${a.address}, which is on the deny list`);
    }
    const why = privateOk ? null : forbiddenPeer(a.address);
    if (why) throw new FetchRefused(`${hostname} resolves to ${a.address}, a ${why} address`);
  }
}

type LookupCallback = (err: Error | null, address: string | ResolvedAddress[], family?: number) => void;

/**
 * A `lookup` for http.request: resolves through `resolver` and checks the answer at connect
 * time, so the address connected to is the address checked (no DNS-rebinding window).
 */
export function guardedLookup(resolver: Resolver, rules: HostRules) {
  return (hostname: string, options: { all?: boolean; family?: number | string }, callback: LookupCallback): void => {
    resolver(hostname)
      .then((answers) => {
        const wanted =
          options.family === 4 || options.family === 6 ? answers.filter((a) => a.family === options.family) : answers;
        checkAddresses(hostname, wanted, rules);
        if (options.all) callback(null, wanted);
        else callback(null, wanted[0].address, wanted[0].family);
      })
      .catch((e: Error) => callback(e, ""));
  };
}
