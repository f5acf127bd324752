// Test helpers for the tool slot: small tools of every shape and a ToolContext whose remote
// records what it was asked. Only tests import this module.
import { z } from "zod";
import { defineTool, type Tool, type ToolContext, type ToolServices } from "../tools/tool";
import type { ExecResult } from "../executors/contract";

export function fakeTool(name: string, extra: Partial<Parameters<typeof defineTool>[0]> = {}): Tool {
  return defineTool({
    name,
    description: `${name} does ${name.replace(/_/g, " ")} things.`,
    input: z.object({ path: z.string() }),
    capabilities: ["ReadsFiles"],
    executor: "runner",
    async execute(i) {
      return { output: `${name}:${i.path}` };
    },
    ...extra,
  } as Parameters<typeof defineTool>[0]);
}

export function testContext(services: ToolServices = {}, reply: ExecResult = { ok: true, output: "" }) {
  const calls: unknown[] = [];
  const progress: string[] = [];
  const ctx: ToolContext = {
    sessionId: "s1",
    callId: "c1",
    signal: new AbortController().signal,
    async remote(input) {
      calls.push(input);
      return reply;
    },
    progress: (chunk) => progress.push(chunk),
    services,
  };
  return { ctx, calls, progress };
}

/** All orderings of a small list (for byte-stability tests). */
export function permutations<T>(items: readonly T[]): T[][] {
  if (items.length <= 1) return [items.slice()];
  return items.flatMap((item, i) =>
    permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [item, ...rest]),
  );
}
