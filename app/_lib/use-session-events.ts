"use client";
// Keeps a session's chat state in step with its event stream: subscribes from the last seq it
// has (stored runs of deltas folded: hub/coalesce.ts), applies events in batches once per
// animation frame (a 1,000-event burst is one render; while catching up, every CATCH_UP_MS),
// and resubscribes from where it stopped when the subscription fails, unless it was refused
// (a share link that was revoked or expired; a person removed from the session's org, whose
// socket the server closed and who is now answered that the session is not there; a session
// deleted): then it stops, "ended", with the reason. A resume
// from events a server crash lost before storing them starts over from what is stored.
// A session opens at its latest WINDOW_TURNS turns (server/hub/history.ts), so a long one costs
// what those turns cost, not its whole log; `loadEarlier` puts the turns before them in front
// (as many as the server's byte budget holds; a turn over it read in parts: earlier-parts.ts).
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import type { SessionEvent } from "../../server/protocol/events";
import { applyEvents, emptySessionState, prependEarlier, windowState, type SessionState } from "./session-state";
import { useSessionApi } from "./session-api";
import { readEarlier } from "./earlier-parts";

export type StreamStatus = "connecting" | "live" | "retrying" | "ended";

const REFUSED = new Set(["FORBIDDEN", "UNAUTHORIZED", "NOT_FOUND"]);
/** The server's answer to a resume from a seq it never stored (turns.events). */
const LOST = "PRECONDITION_FAILED";
/** A batch this big means the stream is catching up on stored events (opening a long session):
 *  the next render waits CATCH_UP_MS instead of the next frame, so a log replayed over a second
 *  renders a few times instead of sixty. Live streaming comes a few events a frame. */
const BURST = 200;
const CATCH_UP_MS = 250;
/** Turns read when a session opens, and per "show earlier". */
export const WINDOW_TURNS = 40;

export interface SessionEvents {
  state: SessionState;
  status: StreamStatus;
  error?: string;
  /** Reads the turns before the loaded ones (state.earlier) and puts them in front. */
  loadEarlier(): Promise<void>;
}

export function useSessionEvents(sessionId: string): SessionEvents {
  const api = useSessionApi();
  const [state, setState] = useState<SessionState>(emptySessionState);
  const [status, setStatus] = useState<StreamStatus>("connecting");
  const [error, setError] = useState<string>();
  const stateRef = useRef(state);
  stateRef.current = state;
  const apiRef = useRef(api);
  apiRef.current = api;

  useEffect(() => {
    let pending: SessionEvent[] = [];
    let frame = 0;
    let backup: ReturnType<typeof setTimeout> | undefined;
    let retry: ReturnType<typeof setTimeout> | undefined;
    let stop: (() => void) | undefined;
    let alive = true;
    let attempt = 0;
    // Seq already queued but not yet applied: a resubscribe must start after it.
    let queuedSeq = stateRef.current.lastSeq;
    let lastFlush = 0;
    let lastBatch = 0;

    const flush = () => {
      if (frame) cancelAnimationFrame(frame);
      clearTimeout(backup);
      frame = 0;
      backup = undefined;
      const batch = pending;
      pending = [];
      lastFlush = performance.now();
      lastBatch = batch.length;
      if (batch.length) setState((s) => applyEvents(s, batch));
    };
    const schedule = () => {
      if (frame || backup !== undefined) return;
      const wait = lastBatch >= BURST ? lastFlush + CATCH_UP_MS - performance.now() : 0;
      if (wait > 0) {
        backup = setTimeout(flush, wait);
        return;
      }
      frame = requestAnimationFrame(flush);
      // Hidden tabs get no animation frames; they still must apply events.
      backup = setTimeout(flush, 200);
    };
    // Opening: where the latest turns start. Failing that, the whole session, as before.
    const open = async () => {
      if (queuedSeq > 0 || stateRef.current.lastSeq > 0) return;
      try {
        const w = await apiRef.current.window(sessionId, WINDOW_TURNS);
        if (!alive || w.afterSeq === 0) return;
        queuedSeq = w.afterSeq;
        setState((s) => (s.lastSeq === 0 ? windowState(w) : s));
      } catch {
        /* the subscription reports what is wrong */
      }
    };
    const start = () => {
      if (!alive) return;
      stop = apiRef.current.subscribe(sessionId, Math.max(queuedSeq, stateRef.current.lastSeq), {
        onStarted: () => {
          attempt = 0;
          setStatus("live");
          setError(undefined);
        },
        onEvent: (ev) => {
          if (ev.seq <= queuedSeq) return;
          queuedSeq = ev.seq;
          setStatus("live");
          pending.push(ev);
          schedule();
        },
        onError: (err) => {
          setError(err.message);
          stop?.();
          const code = (err as { data?: { code?: string } }).data?.code ?? "";
          if (REFUSED.has(code)) return setStatus("ended");
          if (code === LOST) {
            // What it showed last was lost in a server crash before it was stored: start over
            // from what was kept, so the page never shows text the history does not have.
            pending = [];
            queuedSeq = 0;
            stateRef.current = emptySessionState();
            setState(stateRef.current);
            setStatus("connecting");
            void open().then(start);
            return;
          }
          setStatus("retrying");
          retry = setTimeout(start, Math.min(5_000, 250 * 2 ** attempt++));
        },
      });
    };
    void open().then(start);
    return () => {
      alive = false;
      stop?.();
      clearTimeout(retry);
      if (frame) cancelAnimationFrame(frame);
      clearTimeout(backup);
    };
  }, [sessionId]);

  const loading = useRef<Promise<void> | undefined>(undefined);
  const loadEarlier = useCallback(() => {
    const earlier = stateRef.current.earlier;
    if (!earlier) return Promise.resolve();
    loading.current ??= readEarlier(
      (before) => apiRef.current.earlier(sessionId, before, WINDOW_TURNS),
      earlier.afterSeq,
    )
      .then((w) => setState((s) => (s.earlier?.afterSeq === earlier.afterSeq ? prependEarlier(s, w) : s)))
      .finally(() => (loading.current = undefined));
    return loading.current;
  }, [sessionId]);

  return useMemo(() => ({ state, status, error, loadEarlier }), [state, status, error, loadEarlier]);
}
