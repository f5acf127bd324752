// The agent's task list (todo_write) and its question cards (ask_user) as a pure function of
// the session's events, kept beside the chat's state (session-state.ts). The latest
// todos.updated is the list; a question is open from question.asked until question.resolved
// (or its row's cancellation, sent as approval.resolved by turns.cancel).
import type { SessionEvent } from "../../server/protocol/events";
import type { QuestionOption, Todo } from "../../server/protocol/todos-questions";

export interface QuestionCard {
  questionId: string;
  callId: string;
  question: string;
  options: QuestionOption[];
  allowText: boolean;
  outcome?: "answered" | "cancelled";
  answer?: string;
  option?: number;
}

export interface AgentUiState {
  todos: Todo[] | null;
  /** By the ask_user call's id (its tool card shows it). */
  questions: Record<string, QuestionCard>;
}

export const emptyAgentUiState = (): AgentUiState => ({ todos: null, questions: {} });

type AgentEvent = Extract<SessionEvent, { type: "todos.updated" | "question.asked" | "question.resolved" }>;

export function applyAgentUiEvent(s: AgentUiState, ev: AgentEvent): AgentUiState {
  switch (ev.type) {
    case "todos.updated":
      return { ...s, todos: ev.todos };
    case "question.asked":
      if (s.questions[ev.callId]) return s;
      return {
        ...s,
        questions: {
          ...s.questions,
          [ev.callId]: {
            questionId: ev.questionId,
            callId: ev.callId,
            question: ev.question,
            options: ev.options,
            allowText: ev.allowText,
          },
        },
      };
    case "question.resolved": {
      const q = s.questions[ev.callId];
      if (!q || q.outcome) return s;
      return {
        ...s,
        questions: { ...s.questions, [ev.callId]: { ...q, outcome: ev.outcome, answer: ev.answer, option: ev.option } },
      };
    }
  }
}

export function cancelQuestion(s: AgentUiState, questionId: string): AgentUiState {
  const q = Object.values(s.questions).find((c) => c.questionId === questionId);
  if (!q || q.outcome) return s;
  return { ...s, questions: { ...s.questions, [q.callId]: { ...q, outcome: "cancelled" } } };
}

/** Earlier turns put in front of later ones: the later list wins, cards add up. */
export function mergeAgentUiState(before: AgentUiState, later: AgentUiState): AgentUiState {
  return { todos: later.todos ?? before.todos, questions: { ...before.questions, ...later.questions } };
}

/** Questions still waiting for the person, oldest first. */
export function openQuestions(s: AgentUiState): QuestionCard[] {
  return Object.values(s.questions).filter((q) => !q.outcome);
}
