// kill -9 of a real server with a call running and a card waiting (issue 24, items 3 and 4).
// After the restart: the waiting card is cancelled (no longer pending, answering it is refused
// with the reason, its command never runs), the running call is reported to the model as
// "may have partly run", and both cards end with tool.finished.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { SessionEvent } from "../protocol/events";
import { useCrashServers, watchEvents } from "../testing/crash-server";
import { CANCELLED_AT_RESTART, INTERRUPTED_RUNNING } from "../pipeline/interrupted";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Every event of the session from the start until `until` holds (or the timeout). */

describe("kill -9 with a call running and a card waiting", () => {
  const crash = useCrashServers("crash-calls", { QUIVER_LOG_LEVEL: "warn" });

  it("cancels the card, never runs its call, and tells the model the running call may have partly run", async () => {
    const first = await crash.start();
    const a = await first.client.sessions.create.mutate({ title: "running" });
    const b = await first.client.sessions.create.mutate({ title: "waiting" });
    crash.fake.enqueue({
      blocks: [
        {
          type: "tool_call",
          id: "call_sleep",
          name: "shell",
          arguments: JSON.stringify({ command: "sleep 20; echo late > late.txt" }),
        },
      ],
    });
    const running = watchEvents(first, a.id, (ev) => ev.type === "tool.status" && ev.status === "running");
    let answered = false;
    const approve = watchEvents(first, a.id, (ev) => {
      if (ev.type === "approval.required" && !answered) {
        answered = true;
        void first.client.approvals.answer.mutate({ approvalId: ev.approvalId, choice: "once" } as never);
      }
      return answered;
    });
    await first.client.turns.send.mutate({ sessionId: a.id, text: "sleep a while" });
    await approve.done;
    await running.done;
    crash.fake.enqueue({
      blocks: [
        {
          type: "tool_call",
          id: "call_wait",
          name: "shell",
          arguments: JSON.stringify({ command: "echo ran > b-ran.txt" }),
        },
      ],
    });
    const card = watchEvents(first, b.id, (ev) => ev.type === "approval.required");
    await first.client.turns.send.mutate({ sessionId: b.id, text: "write a file" });
    const [cardEvent] = (await card.done).filter((e) => e.type === "approval.required") as Extract<
      SessionEvent,
      { type: "approval.required" }
    >[];
    await sleep(300);
    await first.kill9();

    const second = await crash.start();
    // The card of the interrupted turn is gone and cannot be answered into running its call.
    expect(await second.client.approvals.pending.query({ sessionId: b.id })).toEqual([]);
    await expect(
      second.client.approvals.answer.mutate({ approvalId: cardEvent.approvalId, choice: "once" } as never),
    ).rejects.toThrow(CANCELLED_AT_RESTART);
    // Both cards end, before the turn's end, with what is known.
    const replayB = await watchEvents(second, b.id, (ev) => ev.type === "turn.finished" && ev.status === "interrupted")
      .done;
    expect(replayB.find((e) => e.type === "approval.resolved")).toMatchObject({
      approvalId: cardEvent.approvalId,
      decision: "cancelled",
    });
    expect(replayB.find((e) => e.type === "tool.finished")).toMatchObject({
      status: "cancelled",
      output: CANCELLED_AT_RESTART,
    });
    const replayA = await watchEvents(second, a.id, (ev) => ev.type === "turn.finished" && ev.status === "interrupted")
      .done;
    const endA = replayA.find((e) => e.type === "tool.finished") as Extract<SessionEvent, { type: "tool.finished" }>;
    expect(endA).toMatchObject({ status: "failed", isError: true, output: INTERRUPTED_RUNNING });
    expect(replayA.indexOf(endA)).toBeLessThan(
      replayA.findIndex((e) => e.type === "turn.finished" && e.status === "interrupted"),
    );
    // The model's next request carries the truth about the running call.
    crash.fake.enqueue({ blocks: [{ type: "text", text: "I will check first." }] });
    const before = crash.fake.received();
    const next = watchEvents(
      second,
      a.id,
      (ev, all) => ev.type === "turn.finished" && all.filter((e) => e.type === "turn.finished").length === 2,
    );
    await second.client.turns.send.mutate({ sessionId: a.id, text: "what happened?" });
    await next.done;
    expect(crash.fake.received()).toBe(before + 1);
    const sent = JSON.stringify(crash.fake.requests.at(-1)!.body);
    expect(sent).toContain("its effects are unknown (it may have partly run): check before retrying");
    expect(sent).not.toContain("Not finished: the server restarted");
    // The waiting call never ran.
    await sleep(1_000);
    expect(existsSync(join(crash.dataDir, "workspace", "b-ran.txt"))).toBe(false);
  }, 120_000);
});
