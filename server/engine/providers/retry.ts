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

/**
 * The adapter's events, attempt after attempt. Written as an iterator by hand, not as an async
 * generator over the adapter's own: it hands over every streamed token, and a second generator
 * layer cost several promises and result objects per token where this passes the adapter's
 * result on with one `then`. The consumer calls next() after the previous one settled, as
 * `for await` does; return() (a `for await` left early) closes the adapter's stream.
 */
export function streamWithRetries(
  adapter: ProviderAdapter,
  spec: ModelRequestSpec,
  signal: AbortSignal,
  policy: RetryPolicy = defaultRetryPolicy,
): AsyncIterableIterator<AttemptEvent> {
  return new Attempts(adapter, spec, signal, policy);
}

const DONE: IteratorReturnResult<undefined> = Object.freeze({ done: true, value: undefined });

class Attempts implements AsyncIterableIterator<AttemptEvent> {
  private attempt = 1;
  /** The current attempt's stream (none between attempts). */
  private inner: AsyncIterator<StreamEvent> | undefined;
  /** The current attempt produced something the user has seen. */
  private visible = false;
  /** Set after a retry event: the wait before the next attempt. */
  private delayMs: number | undefined;
  private ended = false;

  constructor(
    private readonly adapter: ProviderAdapter,
    private readonly spec: ModelRequestSpec,
    private readonly signal: AbortSignal,
    private readonly policy: RetryPolicy,
  ) {}

  [Symbol.asyncIterator]() {
    return this;
  }

  next(): Promise<IteratorResult<AttemptEvent, undefined>> {
    if (this.ended) return Promise.resolve(DONE);
    if (this.delayMs !== undefined) {
      const delay = this.delayMs;
      this.delayMs = undefined;
      return sleep(delay, this.signal).then((slept) => {
        if (this.ended) return DONE;
        if (slept) return this.next();
        this.ended = true;
        return { done: false, value: { type: "finish", reason: "cancelled", raw: null } };
      });
    }
    if (!this.inner) {
      this.inner = this.adapter.stream(this.spec, this.signal)[Symbol.asyncIterator]();
      this.visible = false;
    }
    return this.inner.next().then(this.step, this.fail);
  }

  private readonly step = (
    r: IteratorResult<StreamEvent>,
  ): IteratorResult<AttemptEvent, undefined> | Promise<IteratorResult<AttemptEvent, undefined>> => {
    if (r.done) {
      this.inner = undefined;
      this.ended = true;
      return DONE;
    }
    const ev = r.value;
    if (ev.type !== "error") {
      if (ev.type !== "usage") this.visible = true;
      return r;
    }
    // As a `for await` left at the error: the attempt's stream is closed before anything else.
    const inner = this.inner!;
    this.inner = undefined;
    return Promise.resolve(inner.return?.()).then(() => this.failed(ev as StreamError));
  };

  private readonly fail = (err: unknown): never => {
    this.inner = undefined;
    this.ended = true;
    throw err;
  };

  private failed(failure: StreamError): IteratorResult<AttemptEvent, undefined> {
    const { attempt, policy } = this;
    const delay =
      failure.retryable && !this.visible && attempt < policy.attempts
        ? backoffMs(policy, attempt, failure.retryAfterMs)
        : undefined;
    if (delay === undefined || this.signal.aborted) {
      this.ended = true;
      const tries = attempt > 1 ? ` (after ${attempt} attempts)` : "";
      return { done: false, value: { ...failure, message: failure.message + tries } };
    }
    this.attempt++;
    this.delayMs = delay;
    return { done: false, value: { type: "retry", attempt, delayMs: delay, error: failure } };
  }

  return(): Promise<IteratorResult<AttemptEvent, undefined>> {
    this.ended = true;
    const inner = this.inner;
    this.inner = undefined;
    return Promise.resolve(inner?.return?.()).then(() => DONE);
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
