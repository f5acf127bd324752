// Deleting a session ends the commands its agent left running in the background and removes its
// checkpoints, on a real server with its local runner: another session's keep running and keep
// theirs, and the delete itself does not wait for the runner.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { processesMatching } from "../../runner/testing/exec";
import { finishedTurns, follow, useQuiverSession } from "../testing/quiver-session";
import { endSessionOnRunner, type SessionRunners } from "./session-end";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, check: () => Promise<boolean>, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

/** Whether some shadow repository under the checkpoint folder still holds the session's ref. */
function checkpointRefExists(sessionId: string): boolean {
  const base = process.env.QUIVER_CHECKPOINT_DIR || join(import.meta.dirname, "../../.quiver/checkpoints");
  const key = `s-${createHash("sha256").update(sessionId).digest("hex").slice(0, 24)}`;
  return readdirSync(base).some((shadow) => {
    try {
      execFileSync("git", [`--git-dir=${join(base, shadow)}`, "rev-parse", "-q", "--verify", `refs/quiver/${key}`], {
        stdio: "ignore",
      });
      return true;
    } catch {
      return false;
    }
  });
}

describe("a deleted session's commands and checkpoints", () => {
  const t = useQuiverSession("anthropic", "session-commands");

  /** A session whose agent leaves `sleep <marker>` (and a child of it) running in the background. */
  async function sessionRunning(marker: string): Promise<string> {
    const { id } = await t.client.sessions.create.mutate({ title: marker });
    t.fake.enqueue(
      {
        blocks: [
          {
            type: "tool_call",
            id: `call_${marker.replace(".", "")}`,
            name: "shell",
            arguments: JSON.stringify({ command: `(sleep ${marker}1 &); sleep ${marker}2`, yield_time_ms: 300 }),
          },
        ],
      },
      { blocks: [{ type: "text", text: "It runs in the background." }] },
    );
    const done = follow(t.client, id, (_e, all) => finishedTurns(all) === 1, {
      onEvent: (ev) => {
        if (ev.type === "approval.required")
          void t.client.approvals.answer.mutate({ approvalId: ev.approvalId, choice: "once" } as never);
      },
    });
    await t.client.turns.send.mutate({ sessionId: id, text: "start it" });
    const events = await done;
    expect(events.find((e) => e.type === "tool.finished")).toMatchObject({ status: "succeeded" });
    return id;
  }

  it("end with it, its children too; another session's keep running and its checkpoints stay", async () => {
    // The local runner connects, and is recorded where placement looks, a moment after the
    // server answers: a session's files can be listed once it is.
    const { id: probe } = await t.client.sessions.create.mutate({ title: "probe" });
    await until("the local runner", () =>
      t.client.files.tree.query({ sessionId: probe }).then(
        () => true,
        () => false,
      ),
    );
    const gone = await sessionRunning("67.0611");
    const kept = await sessionRunning("67.0612");
    for (const marker of ["67.06111", "67.06112", "67.06121", "67.06122"])
      expect(await processesMatching(`sleep ${marker}`), marker).not.toEqual([]);
    // Each ran a command, so each has a checkpoint from before it.
    expect(checkpointRefExists(gone)).toBe(true);
    expect(checkpointRefExists(kept)).toBe(true);

    await t.client.sessions.remove.mutate({ id: gone });
    await until(
      "the deleted session's commands to end",
      async () => (await processesMatching("sleep 67.0611")).length === 0,
    );
    for (const marker of ["67.06121", "67.06122"])
      expect(await processesMatching(`sleep ${marker}`), marker).not.toEqual([]);
    await until("the deleted session's checkpoints to go", async () => !checkpointRefExists(gone));
    expect(checkpointRefExists(kept)).toBe(true);
  }, 120_000);
});

describe("endSessionOnRunner", () => {
  const pool = (bound: string | undefined, run: SessionRunners["run"]) => {
    const calls = { run: 0, unbound: [] as string[] };
    const runners: SessionRunners = {
      runnerOf: () => bound,
      run: (r) => (calls.run++, run(r)),
      unbind: (id) => void calls.unbound.push(id),
    };
    return { runners, calls };
  };

  it("asks no runner for a session bound to none here (a lookup could make its workspace), and unbinds it", async () => {
    const { runners, calls } = pool(undefined, () => Promise.reject(new Error("not asked")));
    const said: string[] = [];
    await endSessionOnRunner(runners, "s1", (l) => said.push(l));
    expect(calls).toEqual({ run: 0, unbound: ["s1"] });
    expect(said).toEqual([]);
  });

  it("reports a runner that is away or refuses, and still unbinds", async () => {
    const away = pool("r1", () => Promise.reject(new Error("runner r1 is not connected")));
    const said: string[] = [];
    await endSessionOnRunner(away.runners, "s1", (l) => said.push(l));
    const older = pool("r1", () => Promise.resolve({ ok: false, output: "unknown op shell_end_session" }));
    await endSessionOnRunner(older.runners, "s2", (l) => said.push(l));
    expect(said).toEqual([
      "deleted session s1: its commands were not stopped: runner r1 is not connected",
      "deleted session s1: its checkpoints were not removed: runner r1 is not connected",
      "deleted session s2: its commands were not stopped: unknown op shell_end_session",
      "deleted session s2: its checkpoints were not removed: unknown op shell_end_session",
    ]);
    expect([...away.calls.unbound, ...older.calls.unbound]).toEqual(["s1", "s2"]);
  });

  it("asks the runner to stop the commands, then to let the checkpoints go", async () => {
    const ops: string[] = [];
    const { runners, calls } = pool("r1", (r) => (ops.push(r.op), Promise.resolve({ ok: true, output: "" })));
    const said: string[] = [];
    await endSessionOnRunner(runners, "s1", (l) => said.push(l));
    expect(ops).toEqual(["shell_end_session", "checkpoint.forget_session"]);
    expect(calls.unbound).toEqual(["s1"]);
    expect(said).toEqual([]);
  });
});
