// kill -9 of a real server while ask_user's question waits for the person. After the restart
// the turn is recovered as interrupted, but the question is no call with effects: its card stays
// open (a replay shows it waiting), the model's history says the answer will come as the next
// message, and answering it starts that turn, which runs to the end with the answer in it.
import { describe, expect, it } from "vitest";
import { applyEvents, emptySessionState } from "../../app/_lib/session-state";
import type { SessionEvent } from "../protocol/events";
import { useCrashServers, watchEvents } from "../testing/crash-server";
import { QUESTION_AT_RESTART } from "../pipeline/questions";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const ends = (all: SessionEvent[]) => all.filter((e) => e.type === "turn.finished").length;

describe("kill -9 while a question waits", () => {
  const crash = useCrashServers("crash-question", { QUIVER_LOG_LEVEL: "warn" });

  it("keeps the question open across the restart; its answer starts the next turn", async () => {
    const first = await crash.start();
    const s = await first.client.sessions.create.mutate({ title: "question" });
    crash.fake.enqueue({
      blocks: [
        {
          type: "tool_call",
          id: "call_ask",
          name: "ask_user",
          arguments: JSON.stringify({ question: "Which port?", options: [{ label: "3000" }, { label: "8080" }] }),
        },
      ],
    });
    const card = watchEvents(first, s.id, (ev) => ev.type === "question.asked").done;
    await first.client.turns.send.mutate({ sessionId: s.id, text: "start the server" });
    const asked = (await card).find((e) => e.type === "question.asked") as Extract<
      SessionEvent,
      { type: "question.asked" }
    >;
    await sleep(300);
    await first.kill9();

    const second = await crash.start();
    // The page reloaded after the restart: the turn ended interrupted, the card still waits.
    const replay = await watchEvents(second, s.id, (ev) => ev.type === "turn.finished" && ev.status === "interrupted")
      .done;
    const state = applyEvents(emptySessionState(), replay);
    expect(state.agent.questions[asked.callId]).toMatchObject({
      question: "Which port?",
      questionId: asked.questionId,
    });
    expect(state.agent.questions[asked.callId].outcome).toBeUndefined();
    expect(await second.client.approvals.pending.query({ sessionId: s.id })).toEqual([]);

    crash.fake.enqueue({ blocks: [{ type: "text", text: "Starting it on 8080." }] });
    const before = crash.fake.received();
    const next = watchEvents(second, s.id, (_e, all) => ends(all) === 2).done;
    const answered = await second.client.questions.answer.mutate({
      sessionId: s.id,
      callId: asked.callId,
      answer: { option: 1 },
    });
    expect(answered.turnId).toBeTruthy();
    const events = await next;
    expect(events.filter((e) => e.type === "turn.finished").at(-1)).toMatchObject({
      turnId: answered.turnId,
      status: "completed",
    });
    expect(events.find((e) => e.type === "question.resolved")).toMatchObject({
      questionId: asked.questionId,
      outcome: "answered",
      answer: "8080",
    });
    expect(events.find((e) => e.type === "message.user" && e.text.includes("8080"))).toMatchObject({
      text: 'Answer to your question "Which port?": 8080',
    });
    // The model got the truth about the call and then the answer, in one request.
    expect(crash.fake.received()).toBe(before + 1);
    const sent = JSON.stringify(crash.fake.requests.at(-1)!.body);
    expect(sent).toContain(QUESTION_AT_RESTART);
    expect(sent).toContain('Answer to your question \\"Which port?\\": 8080');
    // Answered once only.
    await expect(
      second.client.questions.answer.mutate({ sessionId: s.id, callId: asked.callId, answer: { option: 0 } }),
    ).rejects.toThrow(/already answered/);
    const after = applyEvents(emptySessionState(), await watchEvents(second, s.id, (_e, all) => ends(all) === 2).done);
    expect(after.agent.questions[asked.callId]).toMatchObject({ outcome: "answered", option: 1 });
  }, 180_000);
});
