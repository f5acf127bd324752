import { describe, expect, it } from "vitest";
import { effectiveModel, type ModelChoices } from "./model-choice";

const choices: ModelChoices = {
  providers: [
    { kind: "anthropic", configured: false, defaultModel: "claude-sonnet-5-5", needs: "ANTHROPIC_API_KEY" },
    { kind: "openai", configured: true, defaultModel: "qwen" },
  ],
  fallback: { provider: "openai", model: "qwen" },
};

describe("the model a session's next turn uses", () => {
  it("is the server's default until the session chooses", () => {
    expect(effectiveModel({ provider: null, model: null }, choices)).toEqual({
      provider: "openai",
      model: "qwen",
      isDefault: true,
    });
  });
  it("is the session's provider with its own model, or that provider's default", () => {
    expect(effectiveModel({ provider: "openai", model: "llama3.1" }, choices)).toEqual({
      provider: "openai",
      model: "llama3.1",
      isDefault: false,
    });
    expect(effectiveModel({ provider: "anthropic", model: null }, choices)).toEqual({
      provider: "anthropic",
      model: "claude-sonnet-5-5",
      isDefault: false,
    });
  });
  it("says when nothing is configured to answer", () => {
    expect(effectiveModel({ provider: null, model: null }, { ...choices, fallback: null })).toEqual({
      provider: "anthropic",
      isDefault: true,
    });
  });
});
