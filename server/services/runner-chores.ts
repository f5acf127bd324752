// Work a runner owes for something already deleted: a deleted session's background commands and
// checkpoint ref, a deleted project's workspace folder on a runner that did not answer, and the
// commands and terminals of a person gone from an org (their sessions stay, with their
// checkpoints, for the org's admins to read; nothing may act in them any more). The row
// (RunnerChore) is written in the delete's own transaction, so neither a server killed right after
// the delete commits nor a runner away at the time leaves the work undone for good: it is done at
// once when the runner is connected here, else by whichever instance holds the runner when it
// connects or renews, and the row goes once the runner answers. A claim (claimedUntil) keeps two
// instances from being at one chore together; the runner's ops are idempotent anyway (ending a
// session's commands twice stops nothing more, a ref already gone is "no checkpoints", a folder
// already gone is deleted with existed: false). A chore whose session or workspace row still
// exists (its delete did not go through), or whose person is a member again, is dropped unrun:
// the runner only ever ends what the database has ended.
import { randomUUID } from "node:crypto";
import type { Prisma } from "../db/generated/sqlite/client";
import type { Db } from "../db";
import type { ExecResult } from "../executors/contract";
import { WORKSPACE_DELETE_OP } from "../protocol/workspace-ops";
import { endSessionOnRunner, isGoneWorkspace, type SessionRunners } from "./session-end";

export type ChoreKind = "session-end" | "session-stop" | "workspace-delete";

export interface ChoreRunners extends SessionRunners {
  isLive(runnerId: string): boolean;
  bind(sessionId: string, runnerId?: string, workspaceId?: string): string | undefined;
  runOn(runnerId: string, op: string, input: unknown, timeoutMs?: number, workspaceId?: string): Promise<ExecResult>;
}

interface ChoreRow {
  id: string;
  runnerId: string;
  kind: string;
  workspaceId: string | null;
  sessionId: string | null;
  attempts: number;
  lastError: string | null;
}

/** Longer than a chore's runner calls (two 30 s session ops, a 120 s folder delete) can take. */
const CLAIM_MS = 5 * 60_000;
/** A chore the runner refused waits this long times 2^attempts (at most an hour) before the next try. */
const RETRY_MS = 10_000;
const BATCH = 100;

/** The row a session's delete writes with it: what its workspace's runner owes once it is gone
 *  (nothing when the workspace was never placed on a runner). */
export async function sessionEndChore(db: Db, sessionId: string) {
  const s = await db.session.findUnique({
    where: { id: sessionId },
    select: { workspaceRef: { select: { id: true, runnerId: true, runnerDefault: true } } },
  });
  const ws = s?.workspaceRef;
  if (!ws?.runnerId) return undefined;
  const id = randomUUID();
  const write = db.runnerChore.create({
    data: {
      id,
      runnerId: ws.runnerId,
      kind: "session-end" satisfies ChoreKind,
      sessionId,
      // The runner's own folder is named by no id in its requests.
      workspaceId: ws.runnerDefault ? null : ws.id,
    },
  });
  return { id, write };
}

/** Written in the transaction that ends a person's membership: each of their sessions in the org
 *  whose workspace is on a runner has its commands and terminals stopped there. Answers their ids. */
export async function sessionStopChores(tx: Prisma.TransactionClient, userId: string, orgId: string) {
  const sessions = await tx.session.findMany({
    where: { ownerId: userId, orgId, workspaceRef: { runnerId: { not: null } } },
    select: { id: true, workspaceRef: { select: { id: true, runnerId: true, runnerDefault: true } } },
  });
  const rows = sessions.map((s) => ({
    id: randomUUID(),
    runnerId: s.workspaceRef!.runnerId!,
    kind: "session-stop" satisfies ChoreKind,
    sessionId: s.id,
    workspaceId: s.workspaceRef!.runnerDefault ? null : s.workspaceRef!.id,
  }));
  if (rows.length) await tx.runnerChore.createMany({ data: rows });
  return sessions.map((s) => s.id);
}

/** The rows a project's delete writes with it for the workspace folders their runners did not delete. */
export function workspaceDeleteChores(left: Array<{ workspaceId: string; runnerId: string }>) {
  return left.map((l) => ({
    id: randomUUID(),
    runnerId: l.runnerId,
    kind: "workspace-delete" satisfies ChoreKind,
    workspaceId: l.workspaceId,
  }));
}

export function createRunnerChores(db: Db, runners: ChoreRunners, log: (line: string) => void) {
  const claimable = () => ({ OR: [{ claimedUntil: null }, { claimedUntil: { lt: new Date() } }] });

  /** Only one instance at a chore: the claim is a conditional update, which one of two wins. */
  async function claim(id: string): Promise<boolean> {
    const { count } = await db.runnerChore.updateMany({
      where: { id, ...claimable() },
      data: { claimedUntil: new Date(Date.now() + CLAIM_MS), attempts: { increment: 1 } },
    });
    return count === 1;
  }

  /** The session's commands (and, unless kept, checkpoints) ended on the chore's runner. */
  async function endOnRunner(c: ChoreRow, sessionId: string, keepCheckpoints: boolean): Promise<string | undefined> {
    runners.bind(sessionId, c.runnerId, c.workspaceId ?? undefined);
    const failures: string[] = [];
    await endSessionOnRunner(runners, sessionId, (line) => failures.push(line), { keepCheckpoints });
    return failures.length ? failures.join("; ") : undefined;
  }

  /** Does the chore; answers why it is not done yet, or undefined when it is (or is owed no more). */
  async function perform(c: ChoreRow): Promise<string | undefined> {
    if (c.kind === "session-end" && c.sessionId) {
      if (await db.session.count({ where: { id: c.sessionId } })) return undefined;
      return endOnRunner(c, c.sessionId, false);
    }
    if (c.kind === "session-stop" && c.sessionId) {
      const s = await db.session.findUnique({ where: { id: c.sessionId }, select: { ownerId: true, orgId: true } });
      if (!s || (await db.membership.count({ where: { userId: s.ownerId, orgId: s.orgId } }))) return undefined;
      return endOnRunner(c, c.sessionId, true);
    }
    if (c.kind === "workspace-delete" && c.workspaceId) {
      if (await db.workspace.count({ where: { id: c.workspaceId } })) return undefined;
      const r = await runners.runOn(c.runnerId, WORKSPACE_DELETE_OP, { workspaceId: c.workspaceId });
      return r.ok || isGoneWorkspace(r.output) ? undefined : r.output;
    }
    return undefined; // a kind this server does not know: nothing it could do
  }

  /** late: owed since before (a connect or renewal), so its being done is worth a line. */
  async function run(c: ChoreRow, late: boolean): Promise<void> {
    if (!runners.isLive(c.runnerId) || !(await claim(c.id))) return;
    let error: string | undefined;
    try {
      error = await perform(c);
    } catch (err) {
      error = (err as Error).message;
    }
    if (error === undefined) {
      await db.runnerChore.deleteMany({ where: { id: c.id } });
      if (late) log(`runner chores: ${what(c)} done on runner ${c.runnerId}`);
      return;
    }
    // Said once per new reason: a runner refusing the same way is tried again without a line each time.
    if (error !== c.lastError) log(`runner chores: ${what(c)} not done on runner ${c.runnerId} yet: ${error}`);
    const wait = Math.min(RETRY_MS * 2 ** c.attempts, 3_600_000);
    await db.runnerChore.updateMany({
      where: { id: c.id },
      data: { lastError: error.slice(0, 2000), claimedUntil: new Date(Date.now() + wait) },
    });
  }

  const what = (c: ChoreRow) =>
    c.kind === "session-end"
      ? `deleted session ${c.sessionId}'s ending`
      : c.kind === "session-stop"
        ? `stopping the commands of session ${c.sessionId} (its person left the org)`
        : `deleted workspace ${c.workspaceId}'s folder`;

  const report = (err: unknown) => log(`runner chores: ${(err as Error).message}`);

  async function runOwedBy(sessionIds: string[]): Promise<void> {
    try {
      for (let i = 0; i < sessionIds.length; i += BATCH) {
        const owed = await db.runnerChore.findMany({ where: { sessionId: { in: sessionIds.slice(i, i + BATCH) } } });
        for (const c of owed) {
          if (!runners.isLive(c.runnerId))
            log(`runner chores: ${what(c)} waits for runner ${c.runnerId}, not connected to this instance`);
          await run(c, false);
        }
      }
    } catch (err) {
      report(err);
    }
  }

  return {
    /** Right after a session's delete: its chore at once if its runner is connected here (as
     *  before chores); otherwise it waits in its row for the runner. */
    async sessionRemoved(sessionId: string): Promise<void> {
      try {
        await runOwedBy([sessionId]);
      } finally {
        runners.unbind(sessionId);
      }
    },

    /** Right after a person left an org: the stop of each of their sessions' commands, at once
     *  where its runner is connected here. */
    sessionsStopped: (sessionIds: string[]) => runOwedBy(sessionIds),

    /** The chores of runners connected here (at their connect and each renewal). */
    async runFor(runnerIds: string[]): Promise<void> {
      const live = runnerIds.filter((id) => runners.isLive(id));
      if (!live.length) return;
      try {
        const owed = await db.runnerChore.findMany({
          where: { runnerId: { in: live }, ...claimable() },
          orderBy: { createdAt: "asc" },
          take: BATCH,
        });
        for (const c of owed) await run(c, true);
      } catch (err) {
        report(err);
      }
    },
  };
}

export type RunnerChores = ReturnType<typeof createRunnerChores>;
