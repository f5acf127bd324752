// A terminal's output on its way to the pages attached to it (terminal.ts): the bounded
// scrollback a page is replayed on attach, the fan-out of each chunk to every page, and flow
// control. Each page's socket says when a frame has left for the kernel (the send callback), and
// the PTY channel is told what the slowest interactive page has taken (`drained`), so the runner
// stops reading the PTY and a fast program blocks rather than fill this process. A passive viewer
// does not hold the terminal back: one that falls behind by more than `viewerLagChars` is closed
// (TERMINAL_BEHIND_CLOSE), as is any page that takes nothing for `stallMs` while output waits;
// it reconnects and is replayed the scrollback.
import type { WebSocket } from "ws";
import type { PtyChannel } from "../executors/runner/pty";
import { TERMINAL_BEHIND_CLOSE, type TerminalServerMessage } from "../protocol/terminal";

/** What the output keeps of one attached page. */
export interface OutputPage {
  passive: boolean;
  /** Output offset up to which this socket's frames have left for the kernel. */
  done: number;
  /** When it last took some of its output, or fell behind from caught up. */
  moved: number;
}

export interface TerminalOutputDeps {
  channel: Pick<PtyChannel, "id" | "drained">;
  /** The terminal's attached pages, kept by the bridge (the output closes some). */
  pages: ReadonlyMap<WebSocket, OutputPage>;
  /** Characters kept for replay. */
  scrollbackChars: number;
  /** Output characters a passive viewer may have waiting to be sent before it is closed. */
  viewerLagChars: number;
  /** How long a page may take none of the output waiting for it before it is closed. */
  stallMs: number;
  /** The terminal is still running: an ended one tells its channel nothing. */
  live(): boolean;
  /** A page's socket was closed for falling behind: the bridge forgets it. */
  detach(ws: WebSocket): void;
  log(line: string): void;
}

export interface TerminalOutput {
  /** Output offset just past the last character received. */
  readonly total: number;
  /** Takes a chunk from the PTY: kept for replay and sent to every page. */
  push(data: string): void;
  /** What a page that has shown output up to `offset` is sent on attach; from the start when that is no longer kept. */
  replay(offset: number): { from: number; reset: boolean; data: string };
  /** Tells the PTY channel how far the slowest interactive page (or, with none, the scrollback) has taken the output. */
  advance(): void;
  dispose(): void;
}

export function createTerminalOutput(deps: TerminalOutputDeps): TerminalOutput {
  const { channel, pages, viewerLagChars: viewerLag, stallMs } = deps;
  let buffer = "";
  /** Output offset of buffer[0]; `total` is the offset just past its end. */
  let start = 0;
  let total = 0;
  /** Output offset up to which the PTY channel was told the output is drained. */
  let drained = 0;
  /** Looks for pages that take none of their output while some waits (stallMs). */
  let stallCheck: NodeJS.Timeout | undefined;

  /** Sends output to every page; each frame's send callback says when it has left this process. */
  function fanOut(data: string): void {
    const frame = JSON.stringify({ type: "data", data } satisfies TerminalServerMessage);
    const end = total;
    const before = end - data.length;
    const now = Date.now();
    for (const [ws, peer] of pages) {
      if (ws.readyState !== ws.OPEN) continue;
      if (peer.passive && end - peer.done > viewerLag) {
        drop(ws, `fell more than ${viewerLag} characters behind the terminal's output`);
        continue;
      }
      if (peer.done >= before) peer.moved = now;
      ws.send(frame, (err) => {
        if (err || end <= peer.done) return;
        peer.done = end;
        peer.moved = Date.now();
        if (!peer.passive) advance();
      });
    }
    advance();
  }

  function advance(): void {
    if (!deps.live()) return;
    let front = total;
    for (const peer of pages.values()) if (!peer.passive) front = Math.min(front, peer.done);
    if (front > drained) {
      channel.drained?.(front - drained);
      drained = front;
    }
    const lagging = [...pages.values()].some((p) => p.done < total);
    if (lagging && !stallCheck)
      stallCheck = setTimeout(() => {
        stallCheck = undefined;
        const now = Date.now();
        for (const [ws, peer] of pages)
          if (peer.done < total && now - peer.moved > stallMs)
            drop(ws, `took none of the terminal's output for ${Math.round(stallMs / 1000)} s`);
        advance();
      }, stallMs / 2);
  }

  /** Closes a page that does not read its output; it reconnects and is replayed the scrollback. */
  function drop(ws: WebSocket, why: string): void {
    deps.log(`terminal ${channel.id}: a page's socket ${why}; closing it`);
    ws.close(TERMINAL_BEHIND_CLOSE, "fell behind the terminal's output");
    ws.resume(); // to read the close handshake's answer, should it come
    deps.detach(ws);
    advance();
  }

  return {
    get total() {
      return total;
    },
    push(data) {
      buffer += data;
      total += data.length;
      if (buffer.length > deps.scrollbackChars) {
        const cut = buffer.length - deps.scrollbackChars;
        buffer = buffer.slice(cut);
        start += cut;
      }
      fanOut(data);
    },
    replay(offset) {
      // Replay only what the client has not shown; if it asks for more than we kept, start over.
      const resumable = offset >= start && offset <= total;
      const from = resumable ? offset : start;
      return { from, reset: !resumable, data: buffer.slice(from - start) };
    },
    advance,
    dispose() {
      clearTimeout(stallCheck);
    },
  };
}
