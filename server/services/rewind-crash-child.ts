// Test fixture for rewind-crash.test.ts: a server process's rewind, restore or undo with the real
// database and event hub, which stops (and waits to be killed -9) at one state change:
//   tsx server/services/rewind-crash-child.ts <database-url> <session-id> <turn-id> <action> <stop>
// action: rewind (conversation and files), restore (to the turn's `before`), unrewind:<rewind-id>.
// stop: `runner` (the restore asked, its answer never comes), `<event type>` (just before that
// event is published), `after:<event type>` (once it is stored). The runner is a stand-in: what
// is tested is the server's rows and events, whatever the runner did. With QUIVER_CRASH_CLUSTER=1
// (PostgreSQL) it is one instance among peers (quick heartbeats), and prints `instance <id>`.
import { openDb } from "../db";
import { createEventHub } from "../hub/events";
import type { SessionEventBody } from "../protocol/events";
import { CHECKPOINT_CREATE_OP, CHECKPOINT_RESTORE_OP } from "../protocol/checkpoint-ops";
import { createCheckpointService } from "./checkpoints";
import { createRewindService } from "./rewind";
import { createCluster } from "../hub/cluster";
import { quickCluster } from "../testing/instance";

const [url, sessionId, turnId, action, stop] = process.argv.slice(2);
const { db } = await openDb(url);
const hub = createEventHub(db, { url, writeDelayMs: 0 });
const halt = (why: string): Promise<never> => {
  process.stdout.write(`stopped ${why}\n`);
  return new Promise<never>(() => undefined);
};
const publish = async (sid: string, body: SessionEventBody) => {
  if (stop === body.type) await halt(body.type);
  const ev = await hub.publish(sid, body);
  if (stop === `after:${body.type}`) await halt(stop);
  return ev;
};
const runner = {
  async run(req: { op: string }) {
    if (req.op === CHECKPOINT_CREATE_OP)
      return { ok: true, output: "", meta: { commit: "b".repeat(40), filesChanged: 1, skipped: [] } };
    if (req.op === CHECKPOINT_RESTORE_OP) {
      if (stop === "runner") await halt("runner");
      const changes = [{ path: "a.txt", change: "restore", added: 1, removed: 1 }];
      return { ok: true, output: "", meta: { changes, kept: [], undoCommit: "c".repeat(40) } };
    }
    return { ok: false, output: `no ${req.op} here` };
  },
};
let instanceId: string | undefined;
if (process.env.QUIVER_CRASH_CLUSTER === "1") {
  const cluster = createCluster({ url, ...quickCluster });
  await cluster.start({
    events: () => undefined,
    request: async () => ({ ok: false, code: "failed", message: "a crash fixture" }),
    approvalAnswered: () => undefined,
    welcome: (to) => cluster.send({ type: "welcome", to }),
    resync: () => undefined,
  });
  instanceId = cluster.id;
  process.stdout.write(`instance ${instanceId}\n`);
}
const checkpoints = createCheckpointService({ db, runner, publish, instanceId });
const rewinds = createRewindService({ db, checkpoints, publish });
if (action === "rewind") await rewinds.rewind({ sessionId, turnId, conversation: true, files: true, dryRun: false });
else if (action === "restore") await checkpoints.restore({ sessionId, turnId, dryRun: false });
else await rewinds.unrewind(sessionId, action.slice("unrewind:".length));
await halt("done");
