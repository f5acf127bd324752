// The loop guard of a session: the same tool with the same arguments a third time is blocked;
// after 3 consecutive failed calls a warning joins the result; at 8 the turn halts. Counts are
// seeded from the session's stored tool calls, so a restarted server keeps them.
export const REPEAT_LIMIT = 3;
export const WARN_AFTER_FAILURES = 3;
export const HALT_AFTER_FAILURES = 8;

export interface LoopState {
  seen: Map<string, number>;
  consecutiveFailures: number;
}

export type Outcome = "success" | "failure" | "neutral";

export class LoopGuard {
  private sessions = new Map<string, LoopState>();

  constructor(private seed?: (sessionId: string) => Promise<LoopState>) {}

  async state(sessionId: string): Promise<LoopState> {
    let s = this.sessions.get(sessionId);
    if (!s) {
      s = this.seed ? await this.seed(sessionId) : { seen: new Map(), consecutiveFailures: 0 };
      // Another caller may have seeded meanwhile; keep the first.
      s = this.sessions.get(sessionId) ?? s;
      this.sessions.set(sessionId, s);
    }
    return s;
  }

  /** How many times this exact call was made before, without counting it. */
  async peek(sessionId: string, fingerprint: string): Promise<number> {
    return (await this.state(sessionId)).seen.get(fingerprint) ?? 0;
  }

  /** Counts the call; returns the block message when this is the third identical call. */
  async admit(sessionId: string, toolName: string, fingerprint: string): Promise<string | undefined> {
    const s = await this.state(sessionId);
    const n = (s.seen.get(fingerprint) ?? 0) + 1;
    s.seen.set(fingerprint, n);
    if (n < REPEAT_LIMIT) return undefined;
    return (
      `Blocked: this is call number ${n} of ${toolName} with exactly the same arguments in this session, ` +
      `and repeating it will not give a different answer. Use the earlier result, change the arguments, ` +
      `or try a different approach.`
    );
  }

  /** Records a finished call; returns the warning to append and whether the turn must halt. */
  async settle(sessionId: string, outcome: Outcome): Promise<{ warning?: string; halt?: string }> {
    const s = await this.state(sessionId);
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
