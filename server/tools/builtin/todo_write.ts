// todo_write: the agent's task list for the session. The whole list each call; it is checked
// (bounds, one task in progress) and published as a todos.updated event, which the chat pins
// above the message box and a reload or replay rebuilds. Changes nothing in the workspace.
import { readFileSync } from "node:fs";
import { z } from "zod";
import { respond } from "../errors";
import { defineTool } from "../tool";
import { TODO_MAX_ITEMS, TODO_MAX_TEXT, TodoStatus, type Todo } from "../../protocol/todos-questions";

const input = z.object({
  todos: z
    .array(
      z.object({
        content: z.string().describe("What the task is, in one short line."),
        status: TodoStatus.describe("pending, in_progress (at most one task) or completed."),
      }),
    )
    .describe(`The whole task list, in order (at most ${TODO_MAX_ITEMS}); it replaces the previous one.`),
});

const MARK: Record<Todo["status"], string> = { pending: "[ ]", in_progress: "[>]", completed: "[x]" };

/** The list as the model and the chat get it, or the respond error that says what to fix. */
export function checkTodos(todos: readonly Todo[]): Todo[] {
  if (todos.length > TODO_MAX_ITEMS)
    throw respond(
      `The list has ${todos.length} tasks; keep it to at most ${TODO_MAX_ITEMS} (merge small steps, drop finished detail).`,
    );
  // One line each: a newline or control character cannot fake a second task in the chat.
  const clean = todos.map((t) => ({ content: t.content.replace(/[\s\p{Cc}\p{Cf}]+/gu, " ").trim(), status: t.status }));
  clean.forEach((t, i) => {
    if (!t.content) throw respond(`Task ${i + 1} has no text: say what the task is.`);
    if (t.content.length > TODO_MAX_TEXT)
      throw respond(
        `Task ${i + 1} is ${t.content.length} characters; keep each task to at most ${TODO_MAX_TEXT} (one short line).`,
      );
  });
  const active = clean.flatMap((t, i) => (t.status === "in_progress" ? [i + 1] : []));
  if (active.length > 1)
    throw respond(
      `Tasks ${active.join(", ")} are all in_progress; at most one task may be in_progress at a time. Mark the others pending or completed.`,
    );
  return clean;
}

export function formatTodos(todos: readonly Todo[]): string {
  if (todos.length === 0) return "The task list is now empty.";
  const done = todos.filter((t) => t.status === "completed").length;
  return [
    `Task list updated (${done}/${todos.length} completed):`,
    ...todos.map((t) => `${MARK[t.status]} ${t.content}`),
  ].join("\n");
}

export const todoWriteTool = defineTool({
  name: "todo_write",
  description: readFileSync(new URL("./todo_write.txt", import.meta.url), "utf8").trim(),
  input,
  capabilities: [],
  executor: "server",
  isReadOnly: () => true,
  isDestructive: () => false,
  fieldAliases: { plan: "todos", tasks: "todos", items: "todos" },
  summarize: (i) => {
    const done = i.todos.filter((t) => t.status === "completed").length;
    return `Task list: ${done}/${i.todos.length} completed`;
  },
  async execute(i, ctx) {
    const todos = checkTodos(i.todos);
    if (!ctx.services.todos) throw respond("todo_write is not available here: there is no chat to show the list in.");
    await ctx.services.todos.publish(todos);
    return { output: formatTodos(todos) };
  },
});
