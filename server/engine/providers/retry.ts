// The one place provider calls are retried (the SDK clients are built with maxRetries: 0).
// An attempt is retried on a retryable error only while it has produced nothing the user has
// seen; otherwise a retry would repeat text. Waits honour retry-after, else back off
// exponentially with jitter; a cancel during the wait ends it at once.
import type { ModelRequestSpec, ProviderAdapter, StreamEvent } from "../types";
import type { StreamError } from "./errors";

export interface RetryPolicy {
  /** Attempts in all, the first included. */
  attempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** A retry-after longer than this is not waited for: the error is reported instead. */
  maxRetryAfterMs: number;
}

export const defaultRetryPolicy: RetryPolicy = {
  attempts: 4,
  baseDelayMs: 500,
  maxDelayMs: 8_000,
  maxRetryAfterMs: 60_000,
};

export type AttemptEvent =
  | StreamEvent
  /** Attempt `attempt` failed with `error` and attempt `attempt + 1` starts after `delayMs`. */
  | { type: "retry"; attempt: number; delayMs: number; error: StreamError };

export function backoffMs(
  policy: RetryPolicy,
  failedAttempt: number,
  retryAfter: number | undefined,
): number | undefined {
  if (retryAfter !== undefined) return retryAfter > policy.maxRetryAfterMs ? undefined : retryAfter;
  const exp = Math.min(policy.baseDelayMs * 2 ** (failedAttempt - 1), policy.maxDelayMs);
  return exp * (1 - Math.random() * 0.25);
}

export async function* streamWithRetries(
  adapter: ProviderAdapter,
  spec: ModelRequestSpec,
  signal: AbortSignal,
  policy: RetryPolicy = defaultRetryPolicy,
): AsyncGenerator<AttemptEvent> {
  for (let attempt = 1; ; attempt++) {
    let visible = false;
    let failure: StreamError | undefined;
    for await (const ev of adapter.stream(spec, signal)) {
      if (ev.type === "error") {
        failure = ev as StreamError;
        break;
      }
      if (ev.type !== "usage") visible = true;
      yield ev;
    }
    if (!failure) return;
    const delay =
      failure.retryable && !visible && attempt < policy.attempts
        ? backoffMs(policy, attempt, failure.retryAfterMs)
        : undefined;
    if (delay === undefined || signal.aborted) {
      const tries = attempt > 1 ? ` (after ${attempt} attempts)` : "";
      yield { ...failure, message: failure.message + tries };
      return;
    }
    yield { type: "retry", attempt, delayMs: delay, error: failure };
    if (!(await sleep(delay, signal))) {
      yield { type: "finish", reason: "cancelled", raw: null };
      return;
    }
  }
}

/** Resolves false when aborted first. */
function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(false);
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
