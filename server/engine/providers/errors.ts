// Turns whatever an SDK throws into the normalised error event, deciding once what is worth a
// retry (rate limits, overload, 5xx, dropped connections) and how long the provider asked us
// to wait. Both SDKs' errors share the shape used here (status, headers, error body).
import type { StreamEvent } from "../types";

export type StreamError = Extract<StreamEvent, { type: "error" }> & { status?: number; retryAfterMs?: number };

interface SdkLikeError {
  name?: string;
  message?: string;
  status?: number;
  headers?: Headers;
  error?: { type?: string; code?: unknown; message?: string; error?: { type?: string; message?: string } };
}

/** `retry-after-ms` (non-standard, both SDKs honour it) beats `retry-after` (seconds or a date). */
export function retryAfterMs(headers: Headers | undefined): number | undefined {
  if (!headers || typeof headers.get !== "function") return undefined;
  const ms = Number.parseFloat(headers.get("retry-after-ms") ?? "");
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const raw = headers.get("retry-after");
  if (!raw) return undefined;
  const seconds = Number.parseFloat(raw);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(raw);
  return Number.isFinite(date) ? Math.max(0, date - Date.now()) : undefined;
}

export function toStreamError(err: unknown, provider: string): StreamError {
  const e = (err ?? {}) as SdkLikeError;
  const bodyType = e.error?.error?.type ?? e.error?.type;
  const bodyMessage = e.error?.error?.message ?? e.error?.message;
  // OpenRouter reports mid-stream failures as `data: {"error": {"code": 502, ...}}`.
  const status = typeof e.status === "number" ? e.status : typeof e.error?.code === "number" ? e.error.code : undefined;
  const name = e.name ?? "";
  if (
    name === "APIConnectionTimeoutError" ||
    name === "APIConnectionError" ||
    /ECONNRESET|ECONNREFUSED|socket hang up|terminated|fetch failed/i.test(e.message ?? "")
  ) {
    return {
      type: "error",
      code: "provider_unreachable",
      retryable: true,
      message: `Could not reach the ${provider} API: ${e.message ?? "connection failed"}`,
    };
  }
  const overloaded = status === 529 || bodyType === "overloaded_error";
  const rateLimited = status === 429 || bodyType === "rate_limit_error";
  const serverError =
    (status !== undefined && status >= 500) || bodyType === "api_error" || bodyType === "server_error";
  const detail = bodyMessage ?? e.message ?? "unknown error";
  const retryAfter = retryAfterMs(e.headers);
  if (overloaded)
    return {
      type: "error",
      code: "provider_overloaded",
      retryable: true,
      status,
      retryAfterMs: retryAfter,
      message: `The ${provider} API is overloaded: ${detail}`,
    };
  if (rateLimited)
    return {
      type: "error",
      code: "provider_rate_limited",
      retryable: true,
      status,
      retryAfterMs: retryAfter,
      message: `The ${provider} API rate-limited the request: ${detail}`,
    };
  if (serverError)
    return {
      type: "error",
      code: "provider_server_error",
      retryable: true,
      status,
      retryAfterMs: retryAfter,
      message: `The ${provider} API failed (${status ?? bodyType}): ${detail}`,
    };
  if (status === 401 || status === 403) {
    return {
      type: "error",
      code: "provider_auth",
      retryable: false,
      status,
      message: `The ${provider} API refused the credentials (${status}): ${detail}. Check the API key.`,
    };
  }
  if (status !== undefined)
    return {
      type: "error",
      code: "provider_rejected",
      retryable: false,
      status,
      message: `The ${provider} API rejected the request (${status}): ${detail}`,
    };
  return {
    type: "error",
    code: "provider_error",
    retryable: false,
    message: `The ${provider} stream failed: ${detail}`,
  };
}

/** True for the errors SDKs throw when our own AbortSignal fired. */
export function isAbort(err: unknown, signal: AbortSignal): boolean {
  if (signal.aborted) return true;
  const name = (err as { name?: string } | undefined)?.name;
  return name === "AbortError" || name === "APIUserAbortError";
}
