// kill -9 of a real server while a command's output is being stored piece by piece (a streamed
// spill, services/spills.ts): the spill is never sealed, so nothing can read it or refer to it,
// but its pieces stayed in the database for the 7 days a spill is kept, counted against the
// session's bound on stored output. The next start's recovery of the turn deletes it.
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { useCrashServers, watchEvents } from "../testing/crash-server";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("kill -9 while a command's output is being stored", () => {
  const crash = useCrashServers("crash-spill", { QUIVER_LOG_LEVEL: "warn" });
  /** The session's stored spills: [sealed?, bytes held in its pieces]. */
  const spills = (sessionId: string) => {
    const db = new Database(join(crash.dataDir, "quiver.db"), { readonly: true, fileMustExist: true });
    try {
      return db
        .prepare(
          `SELECT s."sha256" != '' AS sealed, length(s."bytes") + COALESCE((SELECT SUM(length(c."bytes")) FROM "SpillChunk" c WHERE c."spillId" = s."id"), 0) AS held FROM "Spill" s WHERE s."sessionId" = ?`,
        )
        .all(sessionId) as { sealed: number; held: number }[];
    } finally {
      db.close();
    }
  };

  it("leaves no unsealed spill after the restart", async () => {
    const first = await crash.start();
    const s = await first.client.sessions.create.mutate({ title: "loud" });
    crash.fake.enqueue({
      blocks: [
        {
          type: "tool_call",
          id: "call_loud",
          name: "shell",
          arguments: JSON.stringify({ command: "head -c 48000000 /dev/zero | tr '\\0' x", timeout_ms: 120000 }),
        },
      ],
    });
    let answered = false;
    const approve = watchEvents(first, s.id, (ev) => {
      if (ev.type === "approval.required" && !answered) {
        answered = true;
        void first.client.approvals.answer.mutate({ approvalId: ev.approvalId, choice: "once" } as never);
      }
      return answered;
    });
    await first.client.turns.send.mutate({ sessionId: s.id, text: "print a lot" });
    await approve.done;
    // The runner sends a command's output once it ends (or yields), 1 MiB piece after piece:
    // killed once the first of its 48 is stored.
    const deadline = Date.now() + 30_000;
    while (!spills(s.id).some((r) => !r.sealed && r.held >= 1024 * 1024)) {
      if (Date.now() > deadline)
        throw new Error(`no spill being stored: ${JSON.stringify(spills(s.id))}\n${first.log()}`);
      await sleep(20);
    }
    await first.kill9();
    expect(spills(s.id).filter((r) => !r.sealed)).toHaveLength(1);

    const second = await crash.start();
    await watchEvents(second, s.id, (ev) => ev.type === "turn.finished" && ev.status === "interrupted").done;
    expect(spills(s.id)).toEqual([]);
  }, 120_000);
});
