// A GET that cannot be turned on the runner's own network: every hop (redirects are followed by
// hand) has its scheme, host name and resolved address checked, the address at connect time
// through the request's `lookup`, and the connected socket's peer once more; bodies are
// decompressed and capped. A redirect to another host is reported, not followed: the org's
// policy judged the host the call named, and a host it denies must not be one hop away.
import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import { isIP, type Socket } from "node:net";
import { pipeline, type Readable } from "node:stream";
import { createBrotliDecompress, createGunzip, createInflate } from "node:zlib";
import { FETCH_LIMITS } from "../../server/protocol/exec-ops";
import {
  checkAddresses,
  checkHostName,
  FetchRefused,
  forbiddenPeer,
  guardedLookup,
  isPrivateAllowed,
  normaliseHost,
  systemResolver,
  type HostRules,
  type Resolver,
} from "./guard";

export interface FetchOptions extends HostRules {
  resolver?: Resolver;
  timeoutMs?: number;
  maxBodyBytes?: number;
  maxRedirects?: number;
  userAgent?: string;
}

export interface FetchedResponse {
  url: string;
  finalUrl: string;
  status: number;
  statusText: string;
  contentType: string;
  body: Buffer;
  truncated: boolean;
  redirects: string[];
  /** A redirect to another host, reported instead of followed. */
  notFollowed?: string;
}

const DEFAULT_HEADERS: Record<string, string> = {
  accept: "text/html,application/xhtml+xml,text/plain;q=0.9,application/json;q=0.9,*/*;q=0.5",
  "accept-encoding": "gzip, deflate, br",
};
// Sent to the origin the caller named, not to wherever it redirects.
const CREDENTIAL_HEADERS = ["authorization", "cookie", "proxy-authorization"];

export function checkUrl(raw: string, rules: HostRules): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new FetchRefused(`not a valid URL: ${JSON.stringify(raw.slice(0, 200))}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new FetchRefused(`only http and https URLs are fetched, not ${url.protocol}`);
  }
  if (url.username || url.password)
    throw new FetchRefused("URLs with credentials are not fetched; send an Authorization header instead");
  const host = normaliseHost(url.hostname);
  checkHostName(host, rules);
  // A literal address is never looked up, so it is judged here (the socket check repeats it).
  if (isIP(host)) checkAddresses(host, [{ address: host, family: isIP(host) === 6 ? 6 : 4 }], rules);
  return url;
}

export async function guardedFetch(
  rawUrl: string,
  init: { headers?: Record<string, string>; signal?: AbortSignal },
  options: FetchOptions = {},
): Promise<FetchedResponse> {
  // An owned timer and controller, not AbortSignal.any(AbortSignal.timeout(...)): on Node 20
  // the composite signal can be garbage-collected mid-request and its timeout never fires.
  const controller = new AbortController();
  const timeoutMs = options.timeoutMs ?? FETCH_LIMITS.timeoutMs;
  const timer = setTimeout(
    () => controller.abort(Object.assign(new Error("timed out"), { name: "TimeoutError" })),
    timeoutMs,
  );
  const forwardCancel = () => controller.abort(init.signal?.reason);
  if (init.signal?.aborted) forwardCancel();
  init.signal?.addEventListener("abort", forwardCancel, { once: true });
  try {
    return await fetchWithSignal(rawUrl, init, options, controller.signal);
  } finally {
    clearTimeout(timer);
    init.signal?.removeEventListener("abort", forwardCancel);
  }
}

async function fetchWithSignal(
  rawUrl: string,
  init: { headers?: Record<string, string> },
  options: FetchOptions,
  signal: AbortSignal,
): Promise<FetchedResponse> {
  const maxRedirects = options.maxRedirects ?? FETCH_LIMITS.maxRedirects;
  const userHeaders = Object.fromEntries(Object.entries(init.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
  const redirects: string[] = [];
  let url = checkUrl(rawUrl, options);
  const origin = url.origin;
  const host = normaliseHost(url.hostname);
  for (;;) {
    const headers: Record<string, string> = {
      ...DEFAULT_HEADERS,
      "user-agent": options.userAgent ?? "Quiver-fetch/0.1",
      ...userHeaders,
    };
    if (url.origin !== origin) for (const h of CREDENTIAL_HEADERS) delete headers[h];
    const res = await get(url, headers, signal, options);
    const location = res.headers.location;
    if (res.statusCode && res.statusCode >= 300 && res.statusCode < 400 && location) {
      res.destroy();
      if (redirects.length >= maxRedirects)
        throw new FetchRefused(`more than ${maxRedirects} redirects (last to ${location})`);
      const next = new URL(location, url).toString();
      const target = checkUrl(next, options);
      if (normaliseHost(target.hostname) !== host)
        return {
          url: rawUrl,
          finalUrl: url.toString(),
          status: res.statusCode,
          statusText: res.statusMessage ?? "",
          contentType: "",
          body: Buffer.alloc(0),
          truncated: false,
          redirects,
          notFollowed: next,
        };
      redirects.push(next);
      url = target;
      continue;
    }
    const { body, truncated } = await readBody(res, options.maxBodyBytes ?? FETCH_LIMITS.maxBodyBytes, signal);
    return {
      url: rawUrl,
      finalUrl: url.toString(),
      status: res.statusCode ?? 0,
      statusText: res.statusMessage ?? "",
      contentType: String(res.headers["content-type"] ?? ""),
      body,
      truncated,
      redirects,
    };
  }
}

function get(
  url: URL,
  headers: Record<string, string>,
  signal: AbortSignal,
  options: FetchOptions,
): Promise<IncomingMessage> {
  const rules: HostRules = options;
  const host = normaliseHost(url.hostname);
  const request = url.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request(
      {
        protocol: url.protocol,
        hostname: host,
        port: url.port || undefined,
        path: `${url.pathname}${url.search}`,
        method: "GET",
        headers,
        agent: false,
        signal,
        lookup: guardedLookup(options.resolver ?? systemResolver, rules) as never,
      },
      resolve,
    );
    req.on("socket", (socket: Socket) => {
      socket.once("connect", () => {
        const peer = socket.remoteAddress ?? "";
        const why = isPrivateAllowed(host, rules) ? null : forbiddenPeer(peer);
        if (why) req.destroy(new FetchRefused(`connected peer ${peer} is a ${why} address`));
      });
    });
    req.on("error", (e) => reject(signal.aborted && !(e instanceof FetchRefused) ? abortError(signal) : e));
    req.end();
  });
}

function abortError(signal: AbortSignal): Error {
  const reason = signal.reason as Error | undefined;
  return reason?.name === "TimeoutError" ? new Error("the request timed out") : new Error("the request was cancelled");
}

async function readBody(
  res: IncomingMessage,
  max: number,
  signal: AbortSignal,
): Promise<{ body: Buffer; truncated: boolean }> {
  const encoding = String(res.headers["content-encoding"] ?? "")
    .trim()
    .toLowerCase();
  const decoder =
    encoding === "gzip" || encoding === "x-gzip"
      ? createGunzip()
      : encoding === "deflate"
        ? createInflate()
        : encoding === "br"
          ? createBrotliDecompress()
          : undefined;
  const stream: Readable = decoder ? pipeline(res, decoder, () => {}) : res;
  const chunks: Buffer[] = [];
  let size = 0;
  let truncated = false;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      // The cap applies after decompression, so a small compressed bomb stays small.
      const room = max - size;
      if (chunk.length > room) {
        chunks.push(chunk.subarray(0, room));
        size = max;
        truncated = true;
        break;
      }
      chunks.push(chunk);
      size += chunk.length;
    }
  } catch (e) {
    if (signal.aborted) throw abortError(signal);
    throw new Error(`reading the response failed: ${(e as Error).message}`);
  } finally {
    res.destroy();
    decoder?.destroy();
  }
  return { body: Buffer.concat(chunks), truncated };
}
