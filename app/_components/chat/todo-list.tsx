"use client";
// The agent's task list (todo_write), pinned above the message box: how many tasks are done,
// the task in progress, and the whole list, collapsible with a click on its head.
import { useState } from "react";
import type { Todo } from "../../../server/protocol/todos-questions";
import styles from "./agent-ui.module.css";

const MARK: Record<Todo["status"], string> = { pending: "○", in_progress: "◐", completed: "●" };
const LABEL: Record<Todo["status"], string> = { pending: "to do", in_progress: "in progress", completed: "done" };

export function TodoList({ todos }: { todos: readonly Todo[] }) {
  const [open, setOpen] = useState(true);
  if (todos.length === 0) return null;
  const done = todos.filter((t) => t.status === "completed").length;
  const current = todos.find((t) => t.status === "in_progress");
  return (
    <div className={styles.todos} data-testid="todo-list">
      <button
        type="button"
        className={styles.todosHead}
        // Not in the way of the message box's Tab order; the click toggles.
        tabIndex={-1}
        onMouseDown={(e) => e.preventDefault()}
        onClick={() => setOpen(!open)}
        aria-expanded={open}
        data-testid="todo-toggle"
      >
        <span aria-hidden>{open ? "▾" : "▸"}</span>
        <strong>Tasks</strong>
        {!open && current && <span className="muted">{current.content}</span>}
        <span data-testid="todo-progress">
          {done}/{todos.length}
        </span>
      </button>
      {open && (
        <ol className={styles.todosList}>
          {todos.map((t, i) => (
            <li key={i} className={styles.todo} data-status={t.status} data-testid="todo-item">
              <span className={styles.todoMark} aria-label={LABEL[t.status]} title={LABEL[t.status]}>
                {MARK[t.status]}
              </span>
              <span className={styles.todoText}>{t.content}</span>
            </li>
          ))}
        </ol>
      )}
    </div>
  );
}
