// Owns the SessionToolState of every live session on this server: loaded on first use with the
// session's surface and its persisted activations, so a deferred tool activated before a
// restart stays at the tail of the catalog and stays callable; dropped when the session ends.
// Its edit tools are chosen at the first load by the model of the session's first request
// (edit-tools.ts), which the database keeps, so a restart or a model switch mid-session keeps them.
import type { Preset } from "./catalog";
import type { ToolRegistry } from "./registry";
import { SessionToolState } from "./session";
import { editToolsFor, HIDDEN_BY } from "./edit-tools";

export interface ToolSessionsOptions {
  /** The session's surface (default "coding"). */
  presetFor?(sessionId: string): Preset;
  /** Deferred tools the session activated before (persisted), restored in order. */
  loadActivated?(sessionId: string): Promise<readonly string[]>;
  /** Called with the session's whole activation list on every new activation, to persist it. */
  saveActivated?(sessionId: string, activated: readonly string[]): Promise<void>;
  /** A save failed: the activation holds in memory but would not survive a restart. */
  onSaveError?(sessionId: string, err: unknown): void;
  /** The model of the session's first model request, if it made one (it fixes the edit tools). */
  firstModel?(sessionId: string): Promise<string | undefined>;
}

export class ToolSessions {
  private readonly states = new Map<string, SessionToolState>();
  private readonly loading = new Map<string, Promise<SessionToolState>>();

  constructor(
    readonly registry: ToolRegistry,
    private readonly options: ToolSessionsOptions = {},
  ) {}

  /**
   * The session's state with its persisted activations; a turn awaits this before its first
   * request. `model`: the turn's model, which picks the edit tools when the session has made no
   * request yet (no model: edit_file/write_file, the default family).
   */
  load(sessionId: string, model?: string): Promise<SessionToolState> {
    const ready = this.states.get(sessionId);
    if (ready) return Promise.resolve(ready);
    let pending = this.loading.get(sessionId);
    if (!pending) {
      pending = (async () => {
        const [activated, first] = await Promise.all([
          this.options.loadActivated?.(sessionId),
          this.options.firstModel?.(sessionId),
        ]);
        return (
          this.states.get(sessionId) ?? this.create(sessionId, activated ?? [], HIDDEN_BY[editToolsFor(first ?? model)])
        );
      })().finally(() => this.loading.delete(sessionId));
      this.loading.set(sessionId, pending);
    }
    return pending;
  }

  /** The session's state as loaded; before any load (settling a stored call after a restart) a
   *  throwaway view of the catalog that neither sees nor saves activations. */
  forSession(sessionId: string): SessionToolState {
    return (
      this.states.get(sessionId) ?? new SessionToolState(this.registry, this.options.presetFor?.(sessionId) ?? "coding")
    );
  }

  /** Forgets a session's state (session closed or evicted); it is rebuilt from persistence on next load. */
  drop(sessionId: string): void {
    this.states.delete(sessionId);
  }

  clear(): void {
    this.states.clear();
  }

  get size(): number {
    return this.states.size;
  }

  private create(sessionId: string, activated: readonly string[], hidden: ReadonlySet<string>): SessionToolState {
    const { presetFor, saveActivated, onSaveError } = this.options;
    // Saves are chained so an older list never lands after a newer one.
    let saved = Promise.resolve();
    const state: SessionToolState = new SessionToolState(
      this.registry,
      presetFor?.(sessionId) ?? "coding",
      activated,
      saveActivated
        ? () => {
            const list = [...state.activated];
            saved = saved.then(() => saveActivated(sessionId, list)).catch((err) => onSaveError?.(sessionId, err));
          }
        : undefined,
      hidden,
    );
    this.states.set(sessionId, state);
    return state;
  }
}
