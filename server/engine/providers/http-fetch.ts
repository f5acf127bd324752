// A fetch for the provider SDKs on node:http(s) instead of undici: the SDKs read the body as a
// web stream either way, and this one feeds it straight from the socket's data events, where
// undici's fetch goes through a Node stream, an async iterator and a second web stream per
// chunk. Every streamed token takes this path, so its cost is paid thousands of times a second.
import http from "node:http";
import https from "node:https";

const agents = { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) };

/** How long a new connection may take, as undici's fetch allows: the SDKs' own timeout is ten
 *  minutes, and a provider behind a firewall that drops packets must fail (and be retried) sooner. */
export const CONNECT_TIMEOUT_MS = 10_000;
/** How long a connection may go silent (waiting for headers, or mid-body), as undici's fetch
 *  allows: a provider that stalls mid-stream must end the attempt, not hold the turn forever. */
export const IDLE_TIMEOUT_MS = 300_000;

interface Limits {
  connectTimeoutMs: number;
  idleTimeoutMs: number;
}

function abortError(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException("This operation was aborted", "AbortError");
}

export const httpFetch: typeof fetch = (input, init) =>
  fetchOver(input, init ?? {}, { connectTimeoutMs: CONNECT_TIMEOUT_MS, idleTimeoutMs: IDLE_TIMEOUT_MS });

/** httpFetch with other time limits (tests). */
export const httpFetchWithin =
  (limits: Partial<Limits>): typeof fetch =>
  (input, init) =>
    fetchOver(input, init ?? {}, { connectTimeoutMs: CONNECT_TIMEOUT_MS, idleTimeoutMs: IDLE_TIMEOUT_MS, ...limits });

function fetchOver(
  input: Parameters<typeof fetch>[0],
  init: RequestInit,
  { connectTimeoutMs, idleTimeoutMs }: Limits,
): Promise<Response> {
  return new Promise<Response>((resolve, reject) => {
    const url = new URL(typeof input === "string" || input instanceof URL ? input : input.url);
    const signal = init.signal ?? undefined;
    if (signal?.aborted) return reject(abortError(signal));
    const secure = url.protocol === "https:";
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((v, k) => (headers[k] = v));
    const req = (secure ? https : http).request(url, {
      method: init.method ?? "GET",
      headers,
      agent: secure ? agents.https : agents.http,
    });
    let controller: ReadableStreamDefaultController<Uint8Array> | undefined;
    const onAbort = () => {
      const err = abortError(signal!);
      req.destroy(err as Error);
      reject(err);
      try {
        controller?.error(err);
      } catch {
        /* already closed */
      }
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    // Why the connection was cut, when this side cut it (the response then only says "aborted").
    let cut: Error | undefined;
    // Socket inactivity, which Node tracks without re-arming a timer per chunk.
    req.setTimeout(idleTimeoutMs, () => {
      cut = Object.assign(new Error(`terminated: no data from ${url.host} for ${idleTimeoutMs / 1000} s`), {
        code: "ETIMEDOUT",
      });
      req.destroy(cut);
    });
    req.on("socket", (socket) => {
      if (!socket.connecting) return; // a kept-alive connection
      const timer = setTimeout(
        () =>
          req.destroy(
            Object.assign(new Error(`connect ETIMEDOUT ${url.host} (no answer in ${connectTimeoutMs / 1000} s)`), {
              code: "ETIMEDOUT",
            }),
          ),
        connectTimeoutMs,
      );
      socket.once("connect", () => clearTimeout(timer));
      socket.once("close", () => clearTimeout(timer));
    });
    req.on("error", (err) => {
      signal?.removeEventListener("abort", onAbort);
      reject(err);
    });
    req.on("response", (res) => {
      const body = new ReadableStream<Uint8Array>(
        {
          start(c) {
            controller = c;
            res.on("data", (chunk: Buffer) => {
              c.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
              if ((c.desiredSize ?? 1) <= 0) res.pause();
            });
            res.on("end", () => {
              signal?.removeEventListener("abort", onAbort);
              c.close();
            });
            // Named as undici names a cut body, so errors.ts tells it from a refusal: retryable.
            res.on("error", (err: NodeJS.ErrnoException) =>
              c.error(
                cut ??
                  Object.assign(new Error(`terminated: ${err.message}`), {
                    code: err.code ?? "ECONNRESET",
                    cause: err,
                  }),
              ),
            );
          },
          pull: () => void res.resume(),
          cancel: () => void res.destroy(),
        },
        { highWaterMark: 16 },
      );
      const out = new Headers();
      for (const [k, v] of Object.entries(res.headers))
        if (v !== undefined) for (const one of Array.isArray(v) ? v : [v]) out.append(k, one);
      const nullBody = res.statusCode === 204 || res.statusCode === 304 || init.method === "HEAD";
      resolve(
        new Response(nullBody ? null : body, { status: res.statusCode, statusText: res.statusMessage, headers: out }),
      );
    });
    const body = init.body;
    if (body !== undefined && body !== null && typeof body !== "string" && !(body instanceof Uint8Array)) {
      req.destroy();
      return reject(new TypeError("httpFetch sends string or byte bodies only (the provider SDKs send JSON)."));
    }
    req.end(body ?? undefined);
  });
}
