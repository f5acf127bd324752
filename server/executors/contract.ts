// Where a tool's operation runs. The pipeline picks an Executor for a call (runner or, when the
// page's WebContainer is attached and in sync, the browser) and the tool's execute reaches it
// through its context. Executors never touch the database or the model.

export interface ExecRequest {
  sessionId: string;
  /** Unique per call; the executor uses it to cancel. */
  callId: string;
  /** The runner/browser operation: the tool's name (read_file, shell, fetch_url, ...). */
  op: string;
  input: unknown;
  /** Absolute deadline in ms since epoch; the executor fails the call after it. */
  deadline: number;
  signal: AbortSignal;
  onProgress?(chunk: string): void;
  /**
   * Takes the op's whole output as it streams (a command's, up to `ceiling` bytes then its
   * tail); the executor waits for each `sink` before letting more in, so memory stays bounded.
   */
  output?: { ceiling: number; sink(bytes: Uint8Array): Promise<void> };
}

export interface ExecResult {
  ok: boolean;
  /** The operation's text output (or its error message when !ok). */
  output: string;
  /** Operation-specific facts: exit code, signal, bytes omitted, file version, network origin... */
  meta?: Record<string, unknown>;
  /** The whole output when it was streamed (ExecRequest.output), as the pipeline stored it. */
  streamed?: StreamedOutput;
}

/** What the pipeline kept of a streamed output: its size, head and tail, and where it is stored. */
export interface StreamedOutput {
  /** Bytes received (the stored copy, when there is one, holds exactly these). */
  size: number;
  /** All of it when `size` is within the cut threshold, else its first head+4 bytes. */
  head: Uint8Array;
  /** Its last tail+4 bytes when past the threshold, else empty. */
  tail: Uint8Array;
  newlines: number;
  /** The spill holding all `size` bytes. */
  ref?: string;
  /** Why it could not be stored (the reference is then withheld). */
  storeError?: string;
  /** Offsets of this call's output that never reached the server (past the ceiling), relative to its first byte. */
  dropped?: { from: number; to: number; reason: string };
}

export interface Executor {
  readonly kind: "runner" | "browser";
  /** False when nothing is connected for this session: the router then tries the next one. */
  available(sessionId: string): boolean;
  run(request: ExecRequest): Promise<ExecResult>;
}

/** Raised when an executor cannot run a call or see it through (disconnected, deadline passed).
 *  `started`: the call had reached the executor, so it may have run in part. */
export class ExecutorUnavailableError extends Error {
  constructor(
    message: string,
    readonly started = false,
  ) {
    super(message);
    this.name = "ExecutorUnavailableError";
  }
}
