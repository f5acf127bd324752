// Where a command granted network may go: the internet, through slirp4netns, but not the runner
// host's own addresses, the private networks around it, or the cloud's metadata service.
// slirp4netns opens every connection from the host, so without these routes a command reaches
// any service the host binds on a non-loopback address (a database listening on 0.0.0.0, a
// container daemon, another instance of Quiver), every machine of its LAN or VPC, and the
// metadata service that hands out the host's credentials. Blackhole routes in the workspace's
// namespace drop those packets in the kernel, whatever the name, address spelling or protocol
// (TCP, UDP, ICMP) a command uses. They are added from outside the sandbox, in a namespace
// whose owner sandboxes are not, so no command can remove them.
//
// QUIVER_SANDBOX_REACH opens private networks an operator chooses (a package mirror at
// 10.20.0.0/16): a route through slirp4netns, more specific than the blackhole. The metadata
// ranges and the host's own addresses are never opened.
import { spawnSync } from "node:child_process";
import { networkInterfaces } from "node:os";
import ipaddr from "ipaddr.js";

/** Where clouds serve the instance's metadata and credentials (link-local, and Alibaba's). */
export const METADATA = ["169.254.0.0/16", "100.100.100.200/32"];

/**
 * Private and reserved ranges no public service lives in: RFC 1918, carrier-grade NAT (also
 * Tailscale's), the IETF's block, the reserved 240/4, and IPv6 unique-local. Not the
 * documentation blocks or 198.18/15: some networks resolve public names into them (this
 * project's CI machines reach the npm registry at a TEST-NET address; fake-IP proxies answer
 * from 198.18/15). slirp4netns's own 10.0.2.0/24 (its DNS forwarder) stays: the namespace's
 * connected route is more specific than 10/8.
 */
export const NEARBY = [
  "10.0.0.0/8",
  "172.16.0.0/12",
  "192.168.0.0/16",
  "100.64.0.0/10",
  "192.0.0.0/24",
  "240.0.0.0/4",
  "fc00::/7",
];

/** slirp4netns's gateway in the namespace: where an opened network's route points. */
const GATEWAY = "10.0.2.2";
/** slirp4netns's own network (its gateway and DNS forwarder), the namespace's connected route. */
const SLIRP_NET = "10.0.2.0/24";

type Cidr = [ipaddr.IPv4 | ipaddr.IPv6, number];

const cidr = (text: string): Cidr => ipaddr.parseCIDR(text);
const show = ([addr, bits]: Cidr) => `${addr.toString()}/${bits}`;
const overlaps = (a: Cidr, b: Cidr) => a[0].kind() === b[0].kind() && (a[1] <= b[1] ? b[0].match(a) : a[0].match(b));

/**
 * QUIVER_SANDBOX_REACH: comma-separated IPv4 networks or addresses, normalised to CIDRs. Throws
 * on anything else, on IPv6 (slirp4netns gives the namespace none), and on a network that
 * overlaps loopback or the metadata ranges.
 */
export function parseReach(value: string | undefined): string[] {
  const out: string[] = [];
  for (const entry of (value ?? "").split(",").map((s) => s.trim())) {
    if (!entry) continue;
    let parsed: Cidr;
    try {
      parsed = entry.includes("/") ? cidr(entry) : [ipaddr.parse(entry), entry.includes(":") ? 128 : 32];
    } catch {
      throw new Error(`QUIVER_SANDBOX_REACH: ${JSON.stringify(entry)} is not an address or a network (10.20.0.0/16)`);
    }
    if (parsed[0].kind() !== "ipv4")
      throw new Error(`QUIVER_SANDBOX_REACH: ${entry} is IPv6; commands have no IPv6 network to reach it by`);
    const closed = [...METADATA, "127.0.0.0/8", "0.0.0.0/8"].find((m) => overlaps(parsed, cidr(m)));
    if (closed) throw new Error(`QUIVER_SANDBOX_REACH: ${entry} overlaps ${closed}, which commands may never reach`);
    // ipaddr keeps the host bits of 10.20.1.5/16; the route wants the network.
    const network = ipaddr.IPv4.networkAddressFromCIDR(show(parsed));
    out.push(`${network.toString()}/${parsed[1]}`);
  }
  return [...new Set(out)];
}

/**
 * The runner host's own addresses, loopback and link-local aside, as host routes. By address,
 * not by interface: an address given to `lo` outside 127/8 is as reachable as any other.
 */
export function hostAddresses(): string[] {
  const out = new Set<string>();
  for (const a of Object.values(networkInterfaces()).flat()) {
    if (!a) continue;
    const addr = ipaddr.process(a.address.replace(/%.*$/, ""));
    if (addr.range() === "linkLocal" || addr.range() === "loopback") continue;
    out.add(`${addr.toString()}/${addr.kind() === "ipv4" ? 32 : 128}`);
  }
  return [...out].sort();
}

/**
 * The routes, in order, as `ip -batch` lines: the closed ranges, then the opened networks
 * (more specific, or replacing an equal blackhole), then the host's own addresses last, so an
 * opened network never opens the host itself.
 */
export function reachRoutes(reach: readonly string[], own: readonly string[]): string[] {
  const opened = reach.map(cidr);
  const closed = [...METADATA, ...NEARBY].filter((range) => {
    const r = cidr(range);
    // A range inside an opened network is left out rather than shadowing it.
    return !opened.some((o) => o[0].kind() === r[0].kind() && o[1] <= r[1] && r[0].match(o));
  });
  return [...blackholes(closed), ...reach.map((c) => `route replace ${c} via ${GATEWAY} dev tap0`), ...ownRoutes(own)];
}

/** The host's own addresses' blackholes (hostAddresses), as `ip -batch` lines. */
export const ownRoutes = (own: readonly string[]) => blackholes(own);

// ip takes the family from the prefix; `ip -batch` lines take no options such as -6.
const blackholes = (cidrs: readonly string[]) => cidrs.map((c) => `route replace blackhole ${c}`);

/**
 * Whether the namespace's routes keep a command from `address`: loopback (the namespace's own),
 * IPv6, the closed ranges unless opened, and the host's own addresses. A name or anything unparsable
 * counts as closed, so a resolver line the namespace may not reach is never kept by mistake.
 */
export function closedTo(address: string, reach: readonly string[], own: readonly string[]): boolean {
  let addr: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    addr = ipaddr.process(address.replace(/%.*$/, ""));
  } catch {
    return true;
  }
  // slirp4netns gives the namespace no IPv6 route at all.
  if (addr.kind() === "ipv6" || ["loopback", "unspecified"].includes(addr.range())) return true;
  const host: Cidr = [addr, 32];
  if (own.some((o) => overlaps(host, cidr(o)))) return true;
  if ([SLIRP_NET, ...reach].some((r) => overlaps(host, cidr(r)))) return false;
  return [...METADATA, ...NEARBY].some((c) => overlaps(host, cidr(c)));
}

/**
 * Applies `lines` inside the namespace with one `ip -batch`. Throws with ip's own message: a
 * namespace whose routes could not be made is not used (the sandbox gets no network instead).
 */
export function applyRoutes(ip: string, enter: readonly string[], lines: readonly string[]): void {
  if (lines.length === 0) return;
  const r = spawnSync(enter[0], [...enter.slice(1), ip, "-batch", "-"], {
    input: `${lines.join("\n")}\n`,
    stdio: ["pipe", "ignore", "pipe"],
    timeout: 10_000,
  });
  if (r.status !== 0)
    throw new Error(
      `could not close the host's own and private networks to commands: ${r.error?.message ?? (r.stderr?.toString().trim() || `ip exited ${r.status}`)}`,
    );
}
