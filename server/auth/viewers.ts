// Live viewers: the WebSockets opened with a share link, by link. Ending a link (revoked here,
// or found revoked or expired by the periodic re-check, which also catches a revocation made on
// another server instance) aborts its signal, which ends the viewer's subscriptions with an
// error saying why, then closes its sockets. A socket's link was checked when it was upgraded;
// a revocation between that check and the socket's registration here found no socket to drop,
// so `attach` checks the link once more after registering it, before the socket runs a call.
import type { WebSocket } from "ws";

export type LinkEndReason = "unknown" | "expired" | "revoked";

export interface LiveViewersDeps {
  /** Of these link ids, the ones no longer active, and why. */
  ended(ids: string[]): Promise<Array<{ id: string; reason: LinkEndReason }>>;
  /** Re-check period of links with open sockets (default 5 s). */
  recheckMs?: number;
  /** Time the subscriptions get to send their error before the sockets close (default 250 ms). */
  closeDelayMs?: number;
  log?(line: string): void;
}

/** WebSocket close code a viewer's socket gets when its link ends (4000-4999: the application's). */
export const LINK_ENDED_CLOSE = 4403;

export function createLiveViewers(deps: LiveViewersDeps) {
  const links = new Map<string, { controller: AbortController; sockets: Set<WebSocket> }>();
  const closing = new Set<NodeJS.Timeout>();
  let timer: NodeJS.Timeout | undefined;
  let checking = false;

  function ensureTimer() {
    if (timer || links.size === 0) return;
    timer = setInterval(() => void recheck(), deps.recheckMs ?? 5_000);
    timer.unref();
  }

  async function recheck() {
    if (checking) return;
    checking = true;
    try {
      for (const { id, reason } of await deps.ended([...links.keys()])) end(id, reason);
    } catch (err) {
      deps.log?.(`share links re-check failed: ${(err as Error).message}`);
    } finally {
      checking = false;
    }
  }

  /** The signal's reason is the LinkEndReason. */
  function end(linkId: string, reason: LinkEndReason = "revoked") {
    const entry = links.get(linkId);
    if (!entry) return;
    links.delete(linkId);
    entry.controller.abort(reason);
    const t = setTimeout(() => {
      closing.delete(t);
      for (const ws of entry.sockets) ws.close(LINK_ENDED_CLOSE, "share link ended");
    }, deps.closeDelayMs ?? 250);
    closing.add(t);
    if (links.size === 0) {
      clearInterval(timer);
      timer = undefined;
    }
  }

  function register(linkId: string, ws: WebSocket): AbortSignal {
    let entry = links.get(linkId);
    if (!entry) links.set(linkId, (entry = { controller: new AbortController(), sockets: new Set() }));
    const e = entry;
    e.sockets.add(ws);
    ws.once("close", () => {
      e.sockets.delete(ws);
      if (e.sockets.size === 0 && links.get(linkId) === e) links.delete(linkId);
    });
    ensureTimer();
    return e.controller.signal;
  }

  return {
    /** Registers a viewer's socket, then checks its link again (a revocation since the upgrade's
     *  check ends it now, as if it came after). The signal aborts when the link ends; a failed
     *  check rejects, which refuses the socket rather than leave it unwatched. */
    async attach(linkId: string, ws: WebSocket): Promise<AbortSignal> {
      const signal = register(linkId, ws);
      const [gone] = await deps.ended([linkId]);
      if (gone) end(linkId, gone.reason);
      return signal;
    },
    end,
    /** Links with open sockets (tests, diagnostics). */
    size: () => links.size,
    dispose() {
      clearInterval(timer);
      timer = undefined;
      for (const t of closing) clearTimeout(t);
      closing.clear();
      for (const { controller } of links.values()) controller.abort();
      links.clear();
    },
  };
}

export type LiveViewers = ReturnType<typeof createLiveViewers>;
