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
}

export interface ExecResult {
  ok: boolean;
  /** The operation's text output (or its error message when !ok). */
  output: string;
  /** Operation-specific facts: exit code, signal, bytes omitted, file version, network origin... */
  meta?: Record<string, unknown>;
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
