// A repaired call in the history (issue 23, item 12): the model is shown the arguments the call
// ran with — the repair ladder's output, as the pipeline used it — in both wire formats, not
// `{}`; only arguments the ladder cannot repair go back as `{}`.
import { describe, expect, it } from "vitest";
import type { ModelRequestSpec } from "../types";
import { anthropicRequest } from "./anthropic";
import { openaiRequest } from "./openai";

const history = (args: string): ModelRequestSpec => ({
  system: "S",
  tools: [],
  messages: [
    { role: "user", content: [{ type: "text", text: "write it" }] },
    { role: "assistant", content: [{ type: "tool_call", id: "c", name: "write_file", arguments: args }] },
    {
      role: "tool",
      content: [{ type: "tool_result", id: "c", name: "write_file", content: "Created a.ts", isError: false }],
    },
  ],
});
const damaged = '{"path": "a.ts", "content": "x = 1\n",}';
const repaired = { path: "a.ts", content: "x = 1\n" };

describe("replayed arguments of a repaired call", () => {
  it("anthropic: tool_use.input is the repaired object", () => {
    const body = anthropicRequest(history(damaged), { kind: "anthropic", model: "m", apiKey: "k" });
    const call = (body.messages[1].content as { type: string; input?: unknown }[]).find((b) => b.type === "tool_use");
    expect(call?.input).toEqual(repaired);
  });

  it("openai: function.arguments is the repaired JSON; intact arguments go back byte for byte", () => {
    const body = openaiRequest(history(damaged), { kind: "openai", model: "m", apiKey: "k" });
    const calls = (body.messages[2] as { tool_calls: { function: { arguments: string } }[] }).tool_calls;
    expect(JSON.parse(calls[0].function.arguments)).toEqual(repaired);
    const intact = '{ "path" : "a.ts", "content": "y" }';
    const same = openaiRequest(history(intact), { kind: "openai", model: "m", apiKey: "k" });
    expect(
      (same.messages[2] as { tool_calls: { function: { arguments: string } }[] }).tool_calls[0].function.arguments,
    ).toBe(intact);
  });

  it("what the ladder cannot repair still goes back as {}", () => {
    const body = openaiRequest(history("not json at all"), { kind: "openai", model: "m", apiKey: "k" });
    expect(
      (body.messages[2] as { tool_calls: { function: { arguments: string } }[] }).tool_calls[0].function.arguments,
    ).toBe("{}");
  });
});
