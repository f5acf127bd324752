// Coalesces a command's live output into progress frames: at most one every `intervalMs`, and
// no more than `maxBytes` per call (the full output still comes back in the result).

export class ProgressPump {
  private pending = "";
  private sent = 0;
  private timer: NodeJS.Timeout | undefined;
  private capped = false;

  constructor(
    private readonly emit: (chunk: string) => void,
    private readonly intervalMs = 50,
    private readonly maxBytes = 1_000_000,
  ) {}

  readonly write = (text: string): void => {
    if (this.capped) return;
    this.pending += text;
    if (this.pending.length >= 64 * 1024) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), this.intervalMs);
  };

  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.pending || this.capped) return;
    let chunk = this.pending;
    this.pending = "";
    if (this.sent + chunk.length > this.maxBytes) {
      chunk = `${chunk.slice(0, Math.max(0, this.maxBytes - this.sent))}\n… [live output stopped; the result has the rest] …\n`;
      this.capped = true;
    }
    this.sent += chunk.length;
    this.emit(chunk);
  }

  dispose(): void {
    this.flush();
    this.capped = true;
  }
}
