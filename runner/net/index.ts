// The net extension of the runner: the `fetch_url` op with its host rules from the runner's
// environment (QUIVER_FETCH_ALLOW_HOSTS, QUIVER_FETCH_DENY_HOSTS, QUIVER_FETCH_PRIVATE_HOSTS:
// comma-separated host names, `*.suffix` patterns, and for the deny list IPs or CIDR ranges).
import type { RunnerExtension } from "../ops";
import type { FetchOptions } from "./fetch";
import { createFetchOp } from "./fetch-op";

const list = (v: string | undefined) => (v ?? "").split(",").map((s) => s.trim()).filter(Boolean);

export function fetchConfigFromEnv(env: NodeJS.ProcessEnv = process.env): FetchOptions {
  return {
    allowHosts: list(env.QUIVER_FETCH_ALLOW_HOSTS),
    denyHosts: list(env.QUIVER_FETCH_DENY_HOSTS),
    allowPrivateHosts: list(env.QUIVER_FETCH_PRIVATE_HOSTS),
  };
}

export function netExtension(options: FetchOptions = fetchConfigFromEnv()): RunnerExtension {
  return { ops: { fetch_url: createFetchOp(options) } };
}
