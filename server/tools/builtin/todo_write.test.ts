// todo_write: its bounds and states as the model is told them, and through a real server on
// both wire formats the list the chat pins (todos.updated), rebuilt from a replay after a reload.
import { describe, expect, it } from "vitest";
import { applyEvents, emptySessionState } from "../../../app/_lib/session-state";
import { isRespondError } from "../errors";
import { checkTodos, formatTodos } from "./todo_write";
import { finishedTurns, follow, formatsAndDatabases, useQuiverSession } from "../../testing/quiver-session";

const task = (content: string, status: "pending" | "in_progress" | "completed" = "pending") => ({ content, status });

function refusal(todos: ReturnType<typeof task>[]): string {
  try {
    checkTodos(todos);
  } catch (e) {
    expect(isRespondError(e)).toBe(true);
    return (e as Error).message;
  }
  throw new Error("accepted");
}

describe("todo_write's checks", () => {
  it("keeps one line per task and counts what is done", () => {
    const list = checkTodos([
      task("read the code", "completed"),
      task("fix\nthe bug\u202e", "in_progress"),
      task("  run tests "),
    ]);
    expect(list.map((t) => t.content)).toEqual(["read the code", "fix the bug", "run tests"]);
    expect(formatTodos(list)).toBe(
      "Task list updated (1/3 completed):\n[x] read the code\n[>] fix the bug\n[ ] run tests",
    );
    expect(formatTodos([])).toBe("The task list is now empty.");
  });

  it("refuses what breaks the bounds, saying how to fix it", () => {
    expect(refusal(Array.from({ length: 21 }, (_, i) => task(`t${i}`)))).toMatch(/21 tasks; keep it to at most 20/);
    expect(refusal([task("a"), task("x".repeat(201))])).toMatch(
      /Task 2 is 201 characters; keep each task to at most 200/,
    );
    expect(refusal([task(" \n ")])).toMatch(/Task 1 has no text/);
    expect(refusal([task("a", "in_progress"), task("b"), task("c", "in_progress")])).toMatch(
      /Tasks 1, 3 are all in_progress; at most one/,
    );
    expect(checkTodos(Array.from({ length: 20 }, (_, i) => task("y".repeat(199) + (i % 10))))).toHaveLength(20);
  });
});

describe.each(formatsAndDatabases())("todo_write through a real server (%s wire format on %s)", (format, database) => {
  const q = useQuiverSession(format, `todos-${format}`, database);

  it("publishes the list live, refuses a bad one with the model told why, and a replay rebuilds the latest", async () => {
    const first = [task("Read the code", "completed"), task("Fix the bug", "in_progress"), task("Run the tests")];
    q.fake.enqueue(
      {
        blocks: [{ type: "tool_call", id: "call_t1", name: "todo_write", arguments: JSON.stringify({ todos: first }) }],
      },
      {
        blocks: [
          {
            type: "tool_call",
            id: "call_t2",
            name: "todo_write",
            arguments: JSON.stringify({ todos: [task("a", "in_progress"), task("b", "in_progress")] }),
          },
        ],
      },
      {
        blocks: [
          {
            type: "tool_call",
            id: "call_t3",
            name: "todo_write",
            arguments: JSON.stringify({
              todos: [
                task("Read the code", "completed"),
                task("Fix the bug", "completed"),
                task("Run the tests", "in_progress"),
              ],
            }),
          },
        ],
      },
      { blocks: [{ type: "text", text: "Working through the list." }] },
    );
    const before = q.fake.requests.length;
    const session = await q.client.sessions.create.mutate({ title: "todos" });
    const live = follow(q.client, session.id, (_e, all) => finishedTurns(all) === 1);
    await q.client.turns.send.mutate({ sessionId: session.id, text: "fix the bug" });
    const events = await live;
    const updates = events.filter((e) => e.type === "todos.updated");
    expect(updates).toHaveLength(2);
    expect(updates[0]).toMatchObject({ todos: first });
    const results = events.filter((e) => e.type === "tool.finished");
    expect(results.map((e) => e.status)).toEqual(["succeeded", "failed", "succeeded"]);
    // No card: it changes nothing in the workspace.
    expect(events.some((e) => e.type === "approval.required")).toBe(false);
    // What the model got back, on its own wire format.
    const sent = JSON.stringify(q.fake.requests.slice(before).map((r) => r.body));
    expect(sent).toContain("Task list updated (1/3 completed)");
    expect(sent).toContain("Tasks 1, 2 are all in_progress; at most one task may be in_progress at a time");
    expect(sent).toContain("Task list updated (2/3 completed)");

    // A reload: a fresh subscription from 0 rebuilds the same pinned list.
    const replay = await follow(q.client, session.id, (_e, all) => finishedTurns(all) === 1);
    const state = applyEvents(emptySessionState(), replay);
    expect(state.agent.todos).toEqual([
      task("Read the code", "completed"),
      task("Fix the bug", "completed"),
      task("Run the tests", "in_progress"),
    ]);
  }, 90_000);
});
