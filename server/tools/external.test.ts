import { describe, expect, it } from "vitest";
import { defineExternalTool } from "./external";
import { ToolRegistry } from "./registry";

const weather = defineExternalTool({
  name: "mcp__weather__forecast",
  description: "Weather forecast for a city.",
  inputSchema: {
    $schema: "http://json-schema.org/draft-07/schema#",
    type: "object",
    properties: {
      city: { type: "string" },
      days: { anyOf: [{ type: "integer" }, { type: "null" }] },
      opts: { type: "object" },
    },
    required: ["city", "country"],
  },
  capabilities: ["Network"],
  execute: async (i) => ({ output: JSON.stringify(i), network: true }),
});

describe("external tools", () => {
  it("send the sanitised schema", () => {
    expect(weather.jsonSchema).toEqual({
      type: "object",
      properties: {
        city: { type: "string" },
        days: { type: ["integer", "null"] },
        opts: { type: "object", properties: {} },
      },
      required: ["city"],
    });
    expect(weather.source).toBe("external");
    expect(weather.executor).toBe("server");
    expect(weather.approvalFor({})).toBe("auto");
    expect(weather.isOpenWorld({})).toBe(true);
  });

  it("validate arguments against the sanitised schema", () => {
    expect(weather.parse({ city: "Oslo", days: null }).ok).toBe(true);
    expect(weather.parse({ city: "Oslo", days: 3, extra: true }).ok).toBe(true);
    const bad = weather.parse({ town: "Oslo", days: "3" });
    expect(bad.ok).toBe(false);
    if (!bad.ok) {
      expect(bad.error).toContain("- city: missing required field (expected string)");
      expect(bad.fieldMapping).toBeUndefined();
    }
  });

  it("an unusual but valid schema still gets a loose validator", () => {
    const t = defineExternalTool({
      name: "odd",
      description: "Odd.",
      inputSchema: { type: "object", properties: { a: { $ref: "#/definitions/missing" } } },
      capabilities: [],
      execute: async () => ({ output: "" }),
    });
    expect(t.parse({ a: 1, b: 2 }).ok).toBe(true);
    expect(new ToolRegistry([t]).get("odd")!.failClosed).toBe(false);
  });
});
