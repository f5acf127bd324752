// kill -9 of a real server (not of its runner) with commands of the agent running on its local
// runner (issue 24, item 5, from the server's side): one command still running inside the call,
// and one the model left running in the background (a dev server). The local runner follows its
// server (--parent-pid) and its commands die with it, so nothing writes to the workspace after
// the kill and no process of theirs is left, with no server ever started again to clean up.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { SessionEvent } from "../protocol/events";
import { processesMatching } from "../../runner/testing/exec";
import { useCrashServers } from "../testing/crash-server";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("kill -9 of the server with commands running on its local runner", () => {
  const crash = useCrashServers("crash-orphans", { QUIVER_LOG_LEVEL: "warn" });

  it("leaves no command running and nothing written after the kill", async () => {
    const server = await crash.start();
    const { id: sessionId } = await server.client.sessions.create.mutate({ title: "orphans" });
    // Unique sleep lengths are the markers the /proc scan looks for.
    const bg = "7.0411";
    const fg = "7.0412";
    crash.fake.enqueue(
      {
        blocks: [
          {
            type: "tool_call",
            id: "call_bg",
            name: "shell",
            arguments: JSON.stringify({ command: `sleep ${bg}; echo late > late-bg.txt`, yield_time_ms: 300 }),
          },
        ],
      },
      {
        blocks: [
          {
            type: "tool_call",
            id: "call_fg",
            name: "shell",
            arguments: JSON.stringify({
              command: `(sleep ${bg}9; echo late > late-fork.txt) & sleep ${fg}; echo late > late-fg.txt`,
            }),
          },
        ],
      },
    );
    const seen: SessionEvent[] = [];
    const answered = new Set<string>();
    const sub = server.client.turns.events.subscribe(
      { sessionId, lastSeq: 0 },
      {
        onData: (t) => {
          const ev = (t as { data: SessionEvent }).data;
          seen.push(ev);
          if (ev.type === "approval.required" && !answered.has(ev.approvalId)) {
            answered.add(ev.approvalId);
            void server.client.approvals.answer.mutate({ approvalId: ev.approvalId, choice: "once" } as never);
          }
        },
        onError: () => undefined,
      },
    );
    await server.client.turns.send.mutate({ sessionId, text: "start a server, then run something slow" });
    const deadline = Date.now() + 45_000;
    const started = () => seen.filter((e) => e.type === "tool.status" && e.status === "running").length;
    while (!(
      started() >= 2 &&
      (await processesMatching(`sleep ${fg}`)).length > 0 &&
      (await processesMatching(`sleep ${bg}9`)).length > 0
    )) {
      if (Date.now() > deadline)
        throw new Error(`the second command never ran; saw ${seen.map((e) => e.type).join(", ")}\n${server.log()}`);
      await sleep(100);
    }
    // The first call returned with its command still running in the background.
    expect((await processesMatching(`sleep ${bg}`)).length).toBeGreaterThan(0);
    expect(seen.find((e) => e.type === "tool.finished")).toBeDefined();
    sub.unsubscribe();

    await server.kill9();
    // Longer than every sleep: a command that outlived the kill would have written by now.
    await sleep(9_000);
    for (const name of ["late-bg.txt", "late-fg.txt", "late-fork.txt"])
      expect(existsSync(join(crash.dataDir, "workspace", name)), name).toBe(false);
    for (const marker of [bg, `${bg}9`, fg]) expect(await processesMatching(`sleep ${marker}`), marker).toEqual([]);
  }, 120_000);
});
