// The doom-loop guard of a turn: the same tool with the same arguments a third time BACK TO BACK,
// with nothing changed in between, is blocked. Any other call, a change of the workspace (the
// runner's file version moved, or a file-writing tool succeeded) or a new turn starts the count
// over. After 3 consecutive failed calls a warning joins the result; at 8 the turn halts; a new
// turn starts the failure count over too. State lives in memory only: counts are about what the
// model just did in this turn, so nothing is seeded from stored calls of earlier turns.
export const REPEAT_LIMIT = 3;
export const WARN_AFTER_FAILURES = 3;
export const HALT_AFTER_FAILURES = 8;

export type Outcome = "success" | "failure" | "neutral";

/** Whose repeats the guard counts: the turn's, or each subagent's own. */
export function guardKey(turn: { sessionId: string; parent?: { callId: string } }): string {
  return turn.parent ? `${turn.sessionId}\u0000sub\u0000${turn.parent.callId}` : turn.sessionId;
}

interface LoopState {
  turnId: string | null;
  /** Fingerprint of the last admitted call and how many times in a row it was admitted. */
  last?: string;
  repeats: number;
  /** The workspace version seen when the last call was admitted. */
  version?: number;
  consecutiveFailures: number;
}

export class LoopGuard {
  private sessions = new Map<string, LoopState>();

  /** `workspaceVersion`: the runner's file version of the session's workspace, when known. */
  constructor(private workspaceVersion: (sessionId: string) => number | undefined = () => undefined) {}

  private state(sessionId: string, turnId: string | null): LoopState {
    let s = this.sessions.get(sessionId);
    if (!s || s.turnId !== turnId) {
      s = { turnId, repeats: 0, consecutiveFailures: 0 };
      this.sessions.set(sessionId, s);
    }
    return s;
  }

  /** How many identical calls in a row precede this one right now, without counting it. */
  peek(sessionId: string, turnId: string | null, fingerprint: string): number {
    const s = this.sessions.get(sessionId);
    if (!s || s.turnId !== turnId || s.last !== fingerprint) return 0;
    return s.version === this.workspaceVersion(sessionId) ? s.repeats : 0;
  }

  /** Counts the call; returns the block message when it is the third identical call in a row. */
  admit(sessionId: string, turnId: string | null, toolName: string, fingerprint: string): string | undefined {
    const s = this.state(sessionId, turnId);
    const version = this.workspaceVersion(sessionId);
    if (s.last === fingerprint && s.version === version) s.repeats++;
    else {
      s.last = fingerprint;
      s.repeats = 1;
    }
    s.version = version;
    if (s.repeats < REPEAT_LIMIT) return undefined;
    return (
      `Blocked: this is the ${ordinal(s.repeats)} call in a row of ${toolName} with exactly the same arguments, and nothing in ` +
      `the workspace changed since the previous two, so it would give the same answer. Use the earlier result, change the ` +
      `arguments, or try a different approach.`
    );
  }

  /** A call changed the workspace (a file-writing tool succeeded): identical calls may now differ. */
  changed(sessionId: string): void {
    const s = this.sessions.get(sessionId);
    if (s) {
      s.last = undefined;
      s.repeats = 0;
    }
  }

  /** Records a finished call; returns the warning to append and whether the turn must halt. */
  settle(sessionId: string, turnId: string | null, outcome: Outcome): { warning?: string; halt?: string } {
    const s = this.state(sessionId, turnId);
    if (outcome === "neutral") return {};
    if (outcome === "success") {
      s.consecutiveFailures = 0;
      return {};
    }
    const n = ++s.consecutiveFailures;
    if (n >= HALT_AFTER_FAILURES) {
      return { halt: `${n} tool calls in a row failed; the turn was stopped so a person can look.` };
    }
    if (n >= WARN_AFTER_FAILURES) {
      return {
        warning: `Warning: ${n} tool calls in a row have failed. Stop and re-read the errors; change approach rather than retrying variations of the same call. At ${HALT_AFTER_FAILURES} the turn is stopped.`,
      };
    }
    return {};
  }

  forget(sessionId: string): void {
    this.sessions.delete(sessionId);
  }
}

function ordinal(n: number): string {
  return n === 3 ? "third" : `${n}th`;
}
