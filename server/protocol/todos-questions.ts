// The agent's task list (todo_write) and its questions to the person (ask_user): the shapes the
// tools take, the events carry and the IDE shows, with their bounds in one place.
import { z } from "zod";

export const TODO_MAX_ITEMS = 20;
export const TODO_MAX_TEXT = 200;

export const TodoStatus = z.enum(["pending", "in_progress", "completed"]);
export type TodoStatus = z.infer<typeof TodoStatus>;

export const Todo = z.object({ content: z.string(), status: TodoStatus });
export type Todo = z.infer<typeof Todo>;

export const QUESTION_MAX_TEXT = 1000;
export const QUESTION_MIN_OPTIONS = 2;
export const QUESTION_MAX_OPTIONS = 6;
export const OPTION_MAX_LABEL = 80;
export const OPTION_MAX_DESCRIPTION = 300;
/** The longest typed answer (questions.answer refuses a longer one). */
export const ANSWER_MAX_TEXT = 2000;

export const QuestionOption = z.object({ label: z.string(), description: z.string().optional() });
export type QuestionOption = z.infer<typeof QuestionOption>;

/** What a question card shows, as stored on its row and sent in question.asked. */
export const QuestionRequest = z.object({
  question: z.string(),
  options: z.array(QuestionOption),
  /** The person may type an answer of their own besides choosing an option. */
  allowText: z.boolean(),
});
export type QuestionRequest = z.infer<typeof QuestionRequest>;

/** The person's answer: one of the options (by index) or typed text. */
export const QuestionAnswer = z.union([
  z.object({
    option: z
      .number()
      .int()
      .min(0)
      .max(QUESTION_MAX_OPTIONS - 1),
  }),
  z.object({ text: z.string().trim().min(1).max(ANSWER_MAX_TEXT) }),
]);
export type QuestionAnswer = z.infer<typeof QuestionAnswer>;
