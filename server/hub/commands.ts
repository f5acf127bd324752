// Commands that must reach the instance running a turn (several instances on one PostgreSQL
// database): a cancel sent to instance B for a turn on A is forwarded to A, which stops it at
// once; an approval answered on B for a turn waiting on A is announced, and A's waiter reads
// the answer and runs the call. Which instance runs a turn is Turn.instanceId, and it counts
// only while that instance's heartbeat is fresh (cluster.ts). A running turn whose instance is
// gone is claimed by one live instance (claimOrphanedTurns), which then recovers it.
import type { Cluster } from "./cluster";

export interface ClusterCommands {
  cancelElsewhere(sessionId: string): Promise<boolean>;
  runsElsewhere(approvalId: string): Promise<boolean>;
  announce(approvalId: string): Promise<void>;
  /**
   * Takes over the running turns of gone instances (and those of no instance) for recovery and
   * returns their ids. Each turn is claimed by one compare-and-set UPDATE on its instanceId, one
   * row per statement (no lock held between statements, no deadlock between two claimers): of
   * several instances claiming at once, one gets each turn. A claimer that dies before it has
   * recovered the turn leaves it running under its own id, gone in turn, so it is claimed again.
   */
  claimOrphanedTurns(): Promise<string[]>;
  /** Of these turns this instance runs, the ones a peer has claimed (it found this instance gone). */
  takenOver(turnIds: string[]): Promise<string[]>;
}

const CANCEL_TIMEOUT_MS = 15_000;

export function clusterCommands(cluster: Cluster): ClusterCommands {
  const live = cluster.liveSql(`t."instanceId"`);
  return {
    async cancelElsewhere(sessionId) {
      const rows = await cluster.query<{ instanceId: string }>(
        `SELECT t."instanceId" FROM "Turn" t WHERE t."sessionId" = $1 AND t."status" = 'running' AND t."instanceId" <> $2 AND ${live} LIMIT 1`,
        [sessionId, cluster.id],
      );
      if (rows.length === 0) return false;
      const reply = await cluster.request({ type: "cancel", to: rows[0].instanceId, sessionId }, CANCEL_TIMEOUT_MS);
      if (!reply.ok)
        throw new Error(
          `The turn runs on another server instance, which did not cancel it: ${reply.message ?? "no reason"}`,
        );
      return reply.value === true;
    },
    async runsElsewhere(approvalId) {
      const rows = await cluster.query(
        `SELECT 1 FROM "Approval" a JOIN "ToolCall" c ON c."id" = a."toolCallId" JOIN "Turn" t ON t."id" = c."turnId"
         WHERE a."id" = $1 AND t."status" = 'running' AND t."instanceId" <> $2 AND ${live}`,
        [approvalId, cluster.id],
      );
      return rows.length > 0;
    },
    announce: (approvalId) => cluster.send({ type: "approval.answered", approvalId }),
    async claimOrphanedTurns() {
      // In one snapshot: a turn visible here was created after its instance's row, so a live
      // instance's new turn is never taken for an orphan.
      const candidates = await cluster.query<{ id: string; instanceId: string | null }>(
        `SELECT o."id", o."instanceId" FROM "Turn" o WHERE o."status" = 'running' AND o."instanceId" IS DISTINCT FROM $1
           AND (o."instanceId" IS NULL OR NOT ${cluster.liveSql(`o."instanceId"`)}) ORDER BY o."startedAt"`,
        [cluster.id],
      );
      const claimed: string[] = [];
      for (const c of candidates) {
        const rows = await cluster.query(
          `UPDATE "Turn" SET "instanceId" = $1 WHERE "id" = $2 AND "status" = 'running' AND "instanceId" IS NOT DISTINCT FROM $3 RETURNING "id"`,
          [cluster.id, c.id, c.instanceId],
        );
        if (rows.length > 0) claimed.push(c.id);
      }
      return claimed;
    },
    async takenOver(turnIds) {
      if (turnIds.length === 0) return [];
      const rows = await cluster.query<{ id: string }>(
        `SELECT "id" FROM "Turn" WHERE "id" = ANY($1::text[]) AND "instanceId" IS DISTINCT FROM $2`,
        [turnIds, cluster.id],
      );
      return rows.map((r) => r.id);
    },
  };
}
