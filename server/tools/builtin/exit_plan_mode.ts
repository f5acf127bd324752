// exit_plan_mode: the agent's plan, put to the person on a card (always asked, never for the
// session: policy/modes.ts). Accepting it (sessions.acceptPlan) switches the session to the
// mode the person picked before the call runs, so the result only has to say so and the turn
// goes on implementing; "Keep planning" is a rejection whose message goes back to the model.
// Refused outside plan mode by the pipeline (modeRefusal), so it never runs as a no-op.
import { readFileSync } from "node:fs";
import { z } from "zod";
import { defineTool } from "../tool";
import { EXIT_PLAN_MODE } from "../../policy/modes";

const description = readFileSync(new URL("./exit_plan_mode.txt", import.meta.url), "utf8").trim();

const input = z.object({
  plan: z
    .string()
    .trim()
    .min(1)
    .max(40_000)
    .describe("The plan, in Markdown: what to change, where, and how to check it."),
});

export const ACCEPTED =
  "The person accepted your plan and the session has left plan mode. Implement the plan now, step by step; " +
  "when it is done, say what you changed and how you checked it.";

export const exitPlanModeTool = defineTool({
  name: EXIT_PLAN_MODE,
  description,
  input,
  // A person answers it: never batched, never run early, always asked.
  capabilities: ["Interactive"],
  executor: "server",
  approvalFor: () => "required",
  isReadOnly: () => true,
  isConcurrencySafe: () => false,
  summarize: (i) => {
    const first = i.plan.split("\n").find((l) => l.trim()) ?? "";
    const line = first.replace(/^#+\s*/, "").trim();
    return `Plan: ${line.length > 100 ? `${line.slice(0, 99)}…` : line}`;
  },
  async execute() {
    return { output: ACCEPTED };
  },
});
