// ask_user: its checks, and through a real server on both wire formats the question card
// answered by an option, by typed text, and ended by a cancel, with the result the model gets
// each time; answering is refused where it must be (a second answer, text where only options go,
// approvals.answer on a question). A kill -9 while it waits: server/engine/crash-question.test.ts.
import { describe, expect, it } from "vitest";
import { applyEvents, emptySessionState } from "../../../app/_lib/session-state";
import type { SessionEvent } from "../../protocol/events";
import { isRespondError } from "../errors";
import { checkQuestion } from "./ask_user";
import { finishedTurns, follow, formatsAndDatabases, useQuiverSession } from "../../testing/quiver-session";

type Asked = Extract<SessionEvent, { type: "question.asked" }>;
const opts = (...labels: string[]) => labels.map((label) => ({ label }));

function refusal(i: Parameters<typeof checkQuestion>[0]): string {
  try {
    checkQuestion(i);
  } catch (e) {
    expect(isRespondError(e)).toBe(true);
    return (e as Error).message;
  }
  throw new Error("accepted");
}

describe("ask_user's checks", () => {
  it("takes 2 to 6 distinct one-line options and says what to fix otherwise", () => {
    expect(
      checkQuestion({ question: " Which? ", options: [{ label: "A\nB", description: "x\ty" }, { label: "C" }] }),
    ).toEqual({
      question: "Which?",
      options: [{ label: "A B", description: "x y" }, { label: "C" }],
      allowText: true,
    });
    expect(checkQuestion({ question: "q", options: opts("a", "b"), allow_text: false }).allowText).toBe(false);
    expect(refusal({ question: "q", options: opts("a") })).toMatch(/Give 2 to 6 options \(you gave 1\)/);
    expect(refusal({ question: "q", options: opts("a", "b", "c", "d", "e", "f", "g") })).toMatch(/you gave 7/);
    expect(refusal({ question: "q", options: opts("Yes", " yes ") })).toMatch(/Option 2 repeats the label "yes"/);
    expect(refusal({ question: "  ", options: opts("a", "b") })).toMatch(/question is empty/);
    expect(refusal({ question: "x".repeat(1001), options: opts("a", "b") })).toMatch(
      /1001 characters; keep it to at most 1000/,
    );
    expect(refusal({ question: "q", options: [{ label: "a".repeat(81) }, { label: "b" }] })).toMatch(
      /Option 1's label is 81 characters/,
    );
    expect(refusal({ question: "q", options: [{ label: "a", description: "d".repeat(301) }, { label: "b" }] })).toMatch(
      /Option 1's description is 301/,
    );
  });
});

describe.each(formatsAndDatabases())("ask_user through a real server (%s wire format on %s)", (format, database) => {
  const q = useQuiverSession(format, `ask-${format}`, database);

  /** Starts a turn whose model asks `question`; resolves with the card once it shows. */
  async function ask(title: string, args: unknown, then: { type: "text"; text: string }) {
    q.fake.enqueue(
      { blocks: [{ type: "tool_call", id: `call_${title}`, name: "ask_user", arguments: JSON.stringify(args) }] },
      { blocks: [then] },
    );
    const session = await q.client.sessions.create.mutate({ title });
    const card = follow(q.client, session.id, (e) => e.type === "question.asked");
    await q.client.turns.send.mutate({ sessionId: session.id, text: "go" });
    const asked = (await card).find((e): e is Asked => e.type === "question.asked")!;
    return { sessionId: session.id, asked };
  }
  const lastRequest = () => JSON.stringify(q.fake.requests.at(-1)!.body);

  it("an option clicked comes back as the result; the card shows it after a replay", async () => {
    const { sessionId, asked } = await ask(
      "option",
      { question: "Which database?", options: [{ label: "SQLite", description: "simplest" }, { label: "PostgreSQL" }] },
      { type: "text", text: "Using PostgreSQL." },
    );
    expect(asked).toMatchObject({
      question: "Which database?",
      options: [{ label: "SQLite", description: "simplest" }, { label: "PostgreSQL" }],
      allowText: true,
    });
    // A question is no approval: not listed as one, not answerable as one.
    expect(await q.client.approvals.pending.query({ sessionId })).toEqual([]);
    await expect(q.client.approvals.answer.mutate({ approvalId: asked.questionId, choice: "once" })).rejects.toThrow(
      /No such approval/,
    );
    await expect(
      q.client.questions.answer.mutate({ sessionId, callId: asked.callId, answer: { option: 5 } }),
    ).rejects.toThrow(/has 2 options/);
    const done = follow(q.client, sessionId, (_e, all) => finishedTurns(all) === 1);
    expect(
      await q.client.questions.answer.mutate({ sessionId, callId: asked.callId, answer: { option: 1 } }),
    ).toMatchObject({ outcome: { kind: "option", index: 1, label: "PostgreSQL" } });
    const events = await done;
    expect(events.find((e) => e.type === "question.resolved")).toMatchObject({
      outcome: "answered",
      option: 1,
      answer: "PostgreSQL",
    });
    expect(events.find((e) => e.type === "turn.finished")).toMatchObject({ status: "completed" });
    expect(lastRequest()).toContain('The person chose option 2: \\"PostgreSQL\\".');
    await expect(
      q.client.questions.answer.mutate({ sessionId, callId: asked.callId, answer: { option: 0 } }),
    ).rejects.toThrow(/already answered/);
    const state = applyEvents(emptySessionState(), events);
    expect(state.agent.questions[asked.callId]).toMatchObject({ outcome: "answered", option: 1 });
  }, 90_000);

  it("typed text comes back in the person's words; a question without text takes options only", async () => {
    const strict = await ask(
      "strict",
      { question: "Delete build/?", options: opts("Yes", "No"), allow_text: false },
      { type: "text", text: "ok" },
    );
    await expect(
      q.client.questions.answer.mutate({
        sessionId: strict.sessionId,
        callId: strict.asked.callId,
        answer: { text: "maybe" },
      }),
    ).rejects.toThrow(/takes one of its options/);
    const strictDone = follow(q.client, strict.sessionId, (_e, all) => finishedTurns(all) === 1);
    await q.client.questions.answer.mutate({
      sessionId: strict.sessionId,
      callId: strict.asked.callId,
      answer: { option: 1 },
    });
    await strictDone;

    const { sessionId, asked } = await ask(
      "text",
      { question: "What should the button say?", options: opts("Save", "Apply") },
      { type: "text", text: "Renamed." },
    );
    const done = follow(q.client, sessionId, (_e, all) => finishedTurns(all) === 1);
    await q.client.questions.answer.mutate({
      sessionId,
      callId: asked.callId,
      answer: { text: '  Keep it "Store"  ' },
    });
    const events = await done;
    expect(events.find((e) => e.type === "question.resolved")).toMatchObject({
      outcome: "answered",
      answer: 'Keep it "Store"',
    });
    expect(events.filter((e) => e.type === "tool.finished").at(-1)).toMatchObject({ status: "succeeded" });
    expect(lastRequest()).toContain('The person answered in their own words:\\nKeep it \\"Store\\"');
  }, 90_000);

  it("a cancel of the turn ends the question: the card shows cancelled and it cannot be answered", async () => {
    const { sessionId, asked } = await ask(
      "cancel",
      { question: "Go on?", options: opts("Yes", "No") },
      { type: "text", text: "unused" },
    );
    const done = follow(q.client, sessionId, (_e, all) => finishedTurns(all) === 1);
    await q.client.turns.cancel.mutate({ sessionId });
    const events = await done;
    expect(events.find((e) => e.type === "turn.finished")).toMatchObject({ status: "cancelled" });
    const state = applyEvents(emptySessionState(), events);
    expect(state.agent.questions[asked.callId]?.outcome).toBe("cancelled");
    const call = events.filter((e) => e.type === "tool.finished").at(-1);
    expect(call).toMatchObject({ status: "cancelled", isError: true });
    await expect(
      q.client.questions.answer.mutate({ sessionId, callId: asked.callId, answer: { option: 0 } }),
    ).rejects.toThrow(/cancelled/);
    // The next turn's request says the question ended without an answer.
    q.fake.enqueue({ blocks: [{ type: "text", text: "ok" }] });
    const next = follow(q.client, sessionId, (_e, all) => finishedTurns(all) === 2);
    await q.client.turns.send.mutate({ sessionId, text: "never mind" });
    await next;
    expect(lastRequest()).toContain("Cancelled by the person");
    // An unknown call id is refused plainly.
    await expect(
      q.client.questions.answer.mutate({ sessionId, callId: "nope", answer: { option: 0 } }),
    ).rejects.toThrow(/No such question/);
    // The event stream carries a question.resolved (cancelled) or the row's approval.resolved.
    expect(
      events.some(
        (e) =>
          (e.type === "question.resolved" && e.outcome === "cancelled") ||
          (e.type === "approval.resolved" && e.approvalId === asked.questionId),
      ),
    ).toBe(true);
  }, 90_000);
});
