// task: hands a self-contained read-only job to a subagent (server/engine/subagent.ts) and
// returns its final report. Runs in the server through the turn's subagent runner; several
// task calls of one response run together, as read-only neighbours do in the pipeline.
import { readFileSync } from "node:fs";
import { z } from "zod";
import { respond } from "../errors";
import { defineTool } from "../tool";

export const TASK = "task";

const input = z.object({
  description: z
    .string()
    .trim()
    .min(1)
    .max(120)
    .describe("A short label for the job (3-8 words), shown on the subagent's card."),
  prompt: z
    .string()
    .trim()
    .min(1)
    .max(20_000)
    .describe(
      "The whole job for the subagent, self-contained: what to find or explain, where to start, and what its report must contain.",
    ),
});

export const taskTool = defineTool({
  name: TASK,
  description: readFileSync(new URL("./task.txt", import.meta.url), "utf8").trim(),
  input,
  // Read-only: what it runs is the read-only surface, and it is batched with read-only neighbours.
  capabilities: ["ReadsFiles"],
  executor: "server",
  isReadOnly: () => true,
  isConcurrencySafe: () => true,
  fieldAliases: { task: "prompt", instructions: "prompt", job: "prompt", title: "description", name: "description" },
  summarize: (i) => i.description,
  async execute(i, ctx) {
    const subagents = ctx.services.subagents;
    if (!subagents)
      throw respond(
        "task is not available here: subagents run only inside the agent's own live turn, not inside a subagent (nor for a call settled after its turn ended). Do the job with the tools you have.",
      );
    const out = await subagents.run(
      { description: i.description, prompt: i.prompt },
      { callId: ctx.callId, signal: ctx.signal, progress: ctx.progress },
    );
    return { output: out.report, isError: out.isError, kind: "text", meta: { steps: out.steps, calls: out.calls } };
  },
});
