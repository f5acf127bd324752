// Owns the SessionToolState of every live session on this server: created on first use with
// the session's surface and its persisted activations, dropped when the session ends.
import type { Preset } from "./catalog";
import type { ToolRegistry } from "./registry";
import { SessionToolState } from "./session";

export interface ToolSessionsOptions {
  /** The session's surface (default "coding"). */
  presetFor?(sessionId: string): Preset;
  /** Deferred tools the session activated before (persisted), restored in order. */
  activatedFor?(sessionId: string): readonly string[];
  /** Called on every new activation, to persist it with the session. */
  onActivate?(sessionId: string, added: readonly string[]): void;
}

export class ToolSessions {
  private readonly states = new Map<string, SessionToolState>();

  constructor(
    readonly registry: ToolRegistry,
    private readonly options: ToolSessionsOptions = {},
  ) {}

  forSession(sessionId: string): SessionToolState {
    let s = this.states.get(sessionId);
    if (!s) {
      const { presetFor, activatedFor, onActivate } = this.options;
      s = new SessionToolState(
        this.registry,
        presetFor?.(sessionId) ?? "coding",
        activatedFor?.(sessionId) ?? [],
        onActivate ? (added) => onActivate(sessionId, added) : undefined,
      );
      this.states.set(sessionId, s);
    }
    return s;
  }

  /** Forgets a session's state (session closed or evicted); it is rebuilt from persistence on next use. */
  drop(sessionId: string): void {
    this.states.delete(sessionId);
  }

  clear(): void {
    this.states.clear();
  }

  get size(): number {
    return this.states.size;
  }
}
