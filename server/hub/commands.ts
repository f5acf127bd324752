// Commands that must reach the instance running a turn (several instances on one PostgreSQL
// database): a cancel sent to instance B for a turn on A is forwarded to A, which stops it at
// once; an approval answered on B for a turn waiting on A is announced, and A's waiter reads
// the answer and runs the call. Which instance runs a turn is Turn.instanceId, and it counts
// only while that instance's heartbeat is fresh (cluster.ts).
import type { Cluster } from "./cluster";

export interface ClusterCommands {
  cancelElsewhere(sessionId: string): Promise<boolean>;
  runsElsewhere(approvalId: string): Promise<boolean>;
  announce(approvalId: string): Promise<void>;
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
      if (!reply.ok) throw new Error(`The turn runs on another server instance, which did not cancel it: ${reply.message ?? "no reason"}`);
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
  };
}
