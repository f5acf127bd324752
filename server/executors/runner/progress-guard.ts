// What a runner's progress frames may cost this server. A runner coalesces its commands' live
// output itself (one frame per 50 ms at most, 1 MB a call), but a runner is another process and
// may be someone else's machine: one that sends a frame per byte would make an event row, a
// WebSocket message to every viewer and a re-render per frame. The same bounds are held here,
// per call: frames that come faster are joined, and past the byte budget one line says the live
// output stopped (the call's result still has the whole output).

export interface ProgressGuard {
  write(chunk: string): void;
  /** Hands over what is held (before the call's result is passed on). */
  flush(): void;
  /** Flushes, and drops whatever comes later. */
  dispose(): void;
}

export const PROGRESS_INTERVAL_MS = 50;
export const PROGRESS_MAX_CHARS = 1_000_000;
const STOPPED = "\n… [live output stopped; the result has the rest] …\n";

export function progressGuard(
  emit: (chunk: string) => void,
  { intervalMs = PROGRESS_INTERVAL_MS, maxChars = PROGRESS_MAX_CHARS } = {},
): ProgressGuard {
  let held = "";
  let sent = 0;
  let last = 0;
  let timer: NodeJS.Timeout | undefined;
  let done = false;

  const flush = () => {
    clearTimeout(timer);
    timer = undefined;
    if (!held || done) return;
    let chunk = held;
    held = "";
    if (sent + chunk.length > maxChars) {
      chunk = chunk.slice(0, Math.max(0, maxChars - sent)) + STOPPED;
      done = true;
    }
    sent += chunk.length;
    last = Date.now();
    emit(chunk);
  };

  return {
    write(chunk) {
      if (done) return;
      held += chunk;
      // A frame may be held at most one interval; a big one (a runner's own 64 KB) goes at once.
      if (held.length >= 64 * 1024 || Date.now() - last >= intervalMs) flush();
      else timer ??= setTimeout(flush, intervalMs - (Date.now() - last));
    },
    flush,
    dispose() {
      flush();
      done = true;
    },
  };
}
