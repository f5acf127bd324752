import { describe, expect, it } from "vitest";
import { sanitizeSchema } from "./sanitize";

describe("MCP schema sanitiser", () => {
  it.each<[string, unknown, unknown]>([
    [
      "anyOf [X, null] folds to nullable X",
      { anyOf: [{ type: "string", minLength: 1 }, { type: "null" }], description: "d" },
      { type: ["string", "null"], minLength: 1, description: "d" },
    ],
    ["null first folds too", { anyOf: [{ type: "null" }, { type: "integer" }] }, { type: ["integer", "null"] }],
    ["oneOf folds too", { oneOf: [{ type: "number" }, { type: "null" }] }, { type: ["number", "null"] }],
    [
      "enum gains null",
      { anyOf: [{ type: "string", enum: ["a", "b"] }, { type: "null" }] },
      { type: ["string", "null"], enum: ["a", "b", null] },
    ],
    [
      "type list gains null once",
      { anyOf: [{ type: ["string", "number"] }, { type: "null" }] },
      { type: ["string", "number", "null"] },
    ],
    [
      "untyped X is left alone",
      { anyOf: [{ $ref: "#/$defs/A" }, { type: "null" }] },
      { anyOf: [{ $ref: "#/$defs/A" }, { type: "null" }] },
    ],
    [
      "three-way unions are left alone",
      { anyOf: [{ type: "string" }, { type: "number" }, { type: "null" }] },
      { anyOf: [{ type: "string" }, { type: "number" }, { type: "null" }] },
    ],
    ["bare object gets properties", { type: "object" }, { type: "object", properties: {} }],
    [
      "required naming no property is dropped",
      { type: "object", properties: { a: { type: "string" } }, required: ["a", "b"] },
      { type: "object", properties: { a: { type: "string" } }, required: ["a"] },
    ],
    ["empty required is removed", { type: "object", required: ["ghost"] }, { type: "object", properties: {} }],
    [
      "applies deep: properties, items, $defs",
      {
        type: "object",
        properties: {
          list: { type: "array", items: { type: "object", required: ["x"] } },
          opt: { anyOf: [{ type: "boolean" }, { type: "null" }] },
        },
        $defs: { A: { type: "object" } },
      },
      {
        type: "object",
        properties: {
          list: { type: "array", items: { type: "object", properties: {} } },
          opt: { type: ["boolean", "null"] },
        },
        $defs: { A: { type: "object", properties: {} } },
      },
    ],
    [
      "a property named like a keyword is kept",
      { type: "object", properties: { items: { type: "string" }, anyOf: { type: "number" } }, required: ["items"] },
      { type: "object", properties: { items: { type: "string" }, anyOf: { type: "number" } }, required: ["items"] },
    ],
  ])("%s", (_l, input, output) => {
    const before = JSON.stringify(input);
    expect(sanitizeSchema(input)).toEqual(output);
    expect(JSON.stringify(input)).toBe(before);
  });
});
