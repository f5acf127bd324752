// Flow control for a request's output stream (`output` frames, answered by `output.ack`): at most
// WINDOW bytes are sent and not yet stored by the server, so neither side ever holds more than
// that of a command's output however fast it prints and however slow the database is.
import type { RunnerToServer } from "../server/protocol/runner";

export const OUTPUT_WINDOW = 4 * 1024 * 1024;
export const OUTPUT_FRAME = 64 * 1024;

export class OutputWindow {
  private sent = 0;
  private acked = 0;
  private waiter: (() => void) | undefined;

  constructor(
    private readonly id: string,
    private readonly send: (frame: RunnerToServer) => boolean,
    private readonly signal: AbortSignal,
  ) {
    signal.addEventListener("abort", () => this.wake(), { once: true });
  }

  /** Sends `bytes` in frames; resolves once the window has room again. Throws when aborted or disconnected. */
  async write(bytes: Buffer): Promise<void> {
    for (let at = 0; at < bytes.length; at += OUTPUT_FRAME) {
      const piece = bytes.subarray(at, at + OUTPUT_FRAME);
      while (this.sent - this.acked >= OUTPUT_WINDOW) {
        if (this.signal.aborted) throw new Error("output stream stopped: the call was cancelled");
        await new Promise<void>((resolve) => (this.waiter = resolve));
      }
      if (this.signal.aborted) throw new Error("output stream stopped: the call was cancelled");
      if (!this.send({ type: "output", id: this.id, offset: this.sent, data: piece.toString("base64") })) {
        throw new Error("output stream stopped: the server connection is gone");
      }
      this.sent += piece.length;
    }
  }

  ack(offset: number): void {
    this.acked = Math.max(this.acked, offset);
    this.wake();
  }

  private wake(): void {
    const w = this.waiter;
    this.waiter = undefined;
    w?.();
  }
}
