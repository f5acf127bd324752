// What a deleted session leaves on its runner: the commands its agent started and left in the
// background (a dev server, a watcher), and its checkpoints in the workspace's shadow repository.
// Their handles and refs belong to the session, so once it is gone nobody could poll or stop
// the commands but by hand in a terminal, and the checkpoints would only take disk space: both
// end with it. Terminals close on their own path (RunnerPool.unbind).
import { randomUUID } from "node:crypto";
import { SHELL_END_SESSION } from "../protocol/exec-ops";
import { CHECKPOINT_FORGET_OP } from "../protocol/checkpoint-ops";
import type { ExecRequest, ExecResult } from "../executors/contract";

const TIMEOUT_MS = 30_000;

export interface SessionRunners {
  run(request: ExecRequest): Promise<ExecResult>;
  runnerOf(sessionId: string): string | undefined;
  unbind(sessionId: string): void;
}

/** A runner's answer that the workspace is not there: nothing of it is left to end or delete. */
export const isGoneWorkspace = (output: string) => /^workspace \S+ does not exist on this runner$/.test(output);

/** What is asked of the runner, in order, and what the log says when it could not be done. */
const ENDINGS = [
  { op: SHELL_END_SESSION, failed: "its commands were not stopped" },
  { op: CHECKPOINT_FORGET_OP, failed: "its checkpoints were not removed" },
] as const;

/**
 * Stops the session's commands on its runner and lets go of its checkpoints (kept when only its
 * person left the org), then forgets where it was, which closes its terminals here. Only a session bound here has a runner to ask: every session of a ready workspace is,
 * once its runner connects to this instance, and a lookup would make a workspace not yet made
 * just to end nothing in it. A failure (its runner away, or older) is reported, not thrown: the
 * session's RunnerChore row (services/runner-chores.ts) has it asked again. A workspace the
 * runner no longer has is no failure: its commands ended with its folder.
 */
export async function endSessionOnRunner(
  runners: SessionRunners,
  sessionId: string,
  report: (message: string) => void,
  { keepCheckpoints = false } = {},
): Promise<void> {
  if (!runners.runnerOf(sessionId)) return runners.unbind(sessionId);
  const endings = keepCheckpoints ? ENDINGS.filter((e) => e.op !== CHECKPOINT_FORGET_OP) : ENDINGS;
  const named = `${keepCheckpoints ? "session" : "deleted session"} ${sessionId}`;
  try {
    for (const { op, failed } of endings) {
      try {
        const r = await runners.run({
          sessionId,
          callId: `end_${randomUUID()}`,
          op,
          input: {},
          deadline: Date.now() + TIMEOUT_MS,
          signal: AbortSignal.timeout(TIMEOUT_MS),
        });
        if (!r.ok && !isGoneWorkspace(r.output)) report(`${named}: ${failed}: ${r.output}`);
      } catch (err) {
        report(`${named}: ${failed}: ${(err as Error).message}`);
      }
    }
  } finally {
    runners.unbind(sessionId);
  }
}
