// Whose address a connection is, as the bounds that count strangers see it. An IPv6 client gets
// a whole /64 from its provider (SLAAC, privacy addresses) and can change its low 64 bits at
// will, so counting per full IPv6 address lets one client take a fresh budget for every guess;
// its /64 is what it holds. An IPv4 address seen through a dual-stack socket (::ffff:a.b.c.d)
// is the IPv4 address it carries, so both spellings of one client share a count.
import type { IncomingMessage } from "node:http";
import ipaddr from "ipaddr.js";

/** The key a per-address bound counts `address` under: an IPv4 address as is, an IPv6 one's /64. */
export function addressKey(address: string | undefined): string {
  if (!address) return "unknown";
  // A zone (fe80::1%eth0) names the local link the address is on, not a different client.
  const bare = address.split("%")[0];
  // Only the forms a socket reports: "1.2.3" would parse as the legacy 1.2.0.3.
  if (!ipaddr.IPv4.isValidFourPartDecimal(bare) && !ipaddr.IPv6.isValid(bare)) return "unknown";
  const ip = ipaddr.process(bare);
  if (ip.kind() === "ipv4") return ip.toString();
  return `${ipaddr.IPv6.networkAddressFromCIDR(`${ip.toString()}/64`).toString()}/64`;
}

/** The connecting socket's address key: never a header the client writes. */
export const requestAddress = (req: IncomingMessage): string => addressKey(req.socket.remoteAddress);
