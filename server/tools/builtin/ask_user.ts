// ask_user: the agent asks the person a question with 2–6 options (and, unless refused, their
// own words) and waits. The card, its storage, its survival of a reload or restart and the
// answer's path are the pipeline's (server/pipeline/questions.ts); this file checks the
// question and says the answer to the model.
import { readFileSync } from "node:fs";
import { z } from "zod";
import { respond } from "../errors";
import { defineTool } from "../tool";
import { answerText } from "../../pipeline/questions";
import {
  OPTION_MAX_DESCRIPTION,
  OPTION_MAX_LABEL,
  QUESTION_MAX_OPTIONS,
  QUESTION_MAX_TEXT,
  QUESTION_MIN_OPTIONS,
  type QuestionRequest,
} from "../../protocol/todos-questions";

const input = z.object({
  question: z.string().describe("The question, with the context needed to answer it."),
  options: z
    .array(
      z.object({
        label: z.string().describe("A short choice."),
        description: z.string().optional().describe("What the choice means or implies."),
      }),
    )
    .describe(`${QUESTION_MIN_OPTIONS} to ${QUESTION_MAX_OPTIONS} distinct choices.`),
  allow_text: z.boolean().optional().describe("The person may type their own answer (default true)."),
});

type Input = z.infer<typeof input>;

const oneLine = (s: string) => s.replace(/[\s\p{Cc}\p{Cf}]+/gu, " ").trim();

/** The card's request, or the respond error that says what to fix. */
export function checkQuestion(i: Input): QuestionRequest {
  const question = i.question.replace(/\p{Cf}+/gu, "").trim();
  if (!question) throw respond("The question is empty: write the question you want answered.");
  if (question.length > QUESTION_MAX_TEXT)
    throw respond(`The question is ${question.length} characters; keep it to at most ${QUESTION_MAX_TEXT}.`);
  if (i.options.length < QUESTION_MIN_OPTIONS || i.options.length > QUESTION_MAX_OPTIONS) {
    throw respond(`Give ${QUESTION_MIN_OPTIONS} to ${QUESTION_MAX_OPTIONS} options (you gave ${i.options.length}).`);
  }
  const seen = new Set<string>();
  const options = i.options.map((o, n) => {
    const label = oneLine(o.label);
    const description = o.description === undefined ? undefined : oneLine(o.description);
    if (!label) throw respond(`Option ${n + 1} has no label.`);
    if (label.length > OPTION_MAX_LABEL)
      throw respond(
        `Option ${n + 1}'s label is ${label.length} characters; keep labels to at most ${OPTION_MAX_LABEL} and put the rest in its description.`,
      );
    if (description && description.length > OPTION_MAX_DESCRIPTION)
      throw respond(
        `Option ${n + 1}'s description is ${description.length} characters; keep it to at most ${OPTION_MAX_DESCRIPTION}.`,
      );
    if (seen.has(label.toLowerCase()))
      throw respond(`Option ${n + 1} repeats the label "${label}"; each option needs a label of its own.`);
    seen.add(label.toLowerCase());
    return description ? { label, description } : { label };
  });
  return { question, options, allowText: i.allow_text !== false };
}

export const askUserTool = defineTool({
  name: "ask_user",
  description: readFileSync(new URL("./ask_user.txt", import.meta.url), "utf8").trim(),
  input,
  // Interactive: never batched with other calls nor started early while its arguments stream.
  capabilities: ["Interactive"],
  executor: "server",
  isReadOnly: () => true,
  isDestructive: () => false,
  fieldAliases: { choices: "options", prompt: "question", allowText: "allow_text", allow_free_text: "allow_text" },
  summarize: (i) => `Asked: ${oneLine(i.question).slice(0, 100)}`,
  validateInput: (i) => void checkQuestion(i),
  async execute(i, ctx) {
    const request = checkQuestion(i);
    if (!ctx.services.questions)
      throw respond(
        "ask_user is not available here: nobody can answer (a subagent asks nothing; report what is unclear instead).",
      );
    const outcome = await ctx.services.questions.ask(request, ctx.signal);
    return { output: answerText(outcome), isError: outcome.kind === "cancelled" };
  },
});
