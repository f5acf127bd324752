// The net extension of the runner: the `fetch_url` op with its host rules from the runner's
// environment (QUIVER_FETCH_ALLOW_HOSTS, QUIVER_FETCH_DENY_HOSTS, QUIVER_FETCH_PRIVATE_HOSTS:
// comma-separated host names, `*.suffix` patterns, and for the deny list IPs or CIDR ranges;
// QUIVER_FETCH_RESOLVE: `name=address,...` pinned like curl's --resolve, still address-checked).
import { isIP } from "node:net";
import type { RunnerExtension } from "../ops";
import type { FetchOptions } from "./fetch";
import { createFetchOp } from "./fetch-op";
import { normaliseHost, systemResolver, type Resolver } from "./guard";

const list = (v: string | undefined) =>
  (v ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);

/** A resolver that answers pinned names from `map` and asks the system for the rest. */
export function pinnedResolver(map: Record<string, string>, fallback: Resolver = systemResolver): Resolver {
  return async (host) => {
    const pinned = map[normaliseHost(host)];
    return pinned ? [{ address: pinned, family: isIP(pinned) === 6 ? 6 : 4 }] : fallback(host);
  };
}

function parsePins(v: string | undefined): Record<string, string> {
  const map: Record<string, string> = {};
  for (const entry of list(v)) {
    const [name, address] = entry.split("=").map((s) => s.trim());
    if (!name || !address || !isIP(address))
      throw new Error(`QUIVER_FETCH_RESOLVE entries are name=address (got ${JSON.stringify(entry)})`);
    map[normaliseHost(name)] = address;
  }
  return map;
}

export function fetchConfigFromEnv(env: NodeJS.ProcessEnv = process.env): FetchOptions {
  return {
    allowHosts: list(env.QUIVER_FETCH_ALLOW_HOSTS),
    denyHosts: list(env.QUIVER_FETCH_DENY_HOSTS),
    allowPrivateHosts: list(env.QUIVER_FETCH_PRIVATE_HOSTS),
    resolver: pinnedResolver(parsePins(env.QUIVER_FETCH_RESOLVE)),
  };
}

export function netExtension(options: FetchOptions = fetchConfigFromEnv()): RunnerExtension {
  return { ops: { fetch_url: createFetchOp(options) } };
}
