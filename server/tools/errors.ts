// The two error kinds of the tool pipeline. `respond` goes back to the model as a failed tool
// result whose message says how to fix the next call; `fatal` ends the turn. Tools throw them
// (`throw respond("...")`); the pipeline tells them apart with the guards below. Anything else a
// tool throws is treated by the pipeline as `respond` with the error's message.

export class RespondError extends Error {
  readonly kind = "respond" as const;
  /** Structured facts for observers (UI, audit), e.g. field mappings or candidates. */
  readonly meta?: Record<string, unknown>;
  constructor(message: string, meta?: Record<string, unknown>) {
    super(message);
    this.name = "RespondError";
    this.meta = meta;
  }
}

export class FatalError extends Error {
  readonly kind = "fatal" as const;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "FatalError";
  }
}

export type ToolError = RespondError | FatalError;

/** A failed result for the model; the message must say what to change in the next call. */
export function respond(message: string, meta?: Record<string, unknown>): RespondError {
  return new RespondError(message, meta);
}

/** Ends the turn: the situation cannot be fixed by the model retrying. */
export function fatal(message: string, options?: { cause?: unknown }): FatalError {
  return new FatalError(message, options);
}

// Duck-typed on `kind` as well, so errors crossing module copies (vitest, tsx) still match.
export function isRespondError(e: unknown): e is RespondError {
  return e instanceof RespondError || (e instanceof Error && (e as { kind?: unknown }).kind === "respond");
}

export function isFatalError(e: unknown): e is FatalError {
  return e instanceof FatalError || (e instanceof Error && (e as { kind?: unknown }).kind === "fatal");
}

export function isToolError(e: unknown): e is ToolError {
  return isRespondError(e) || isFatalError(e);
}

/** Normalises anything thrown into one of the two kinds (unknown errors respond). */
export function toToolError(e: unknown): ToolError {
  if (isToolError(e)) return e;
  if (e instanceof Error) return new RespondError(e.message || e.name);
  return new RespondError(String(e));
}
