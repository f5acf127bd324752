// The model-facing JSON Schema of a tool: zod's input-side schema, minus what only costs tokens
// ($schema, the safe-integer bounds zod adds to every .int()). Deterministic for a given schema,
// which the catalog's byte-stability relies on.
import { z } from "zod";

export type JsonSchema = { [key: string]: unknown };

const MAX = Number.MAX_SAFE_INTEGER;

function prune(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(prune);
  if (!node || typeof node !== "object") return node;
  const out: JsonSchema = {};
  for (const [k, v] of Object.entries(node as JsonSchema)) {
    if (k === "$schema") continue;
    if (k === "minimum" && v === -MAX) continue;
    if (k === "maximum" && v === MAX) continue;
    out[k] = prune(v);
  }
  return out;
}

export function modelJsonSchema(schema: z.ZodType): JsonSchema {
  const json = z.toJSONSchema(schema, { io: "input", unrepresentable: "throw" });
  return prune(json) as JsonSchema;
}

/** Property names and required list of an object schema (empty when not an object). */
export function objectShape(schema: JsonSchema): { properties: string[]; required: string[] } {
  const props = schema.properties;
  const properties = props && typeof props === "object" && !Array.isArray(props) ? Object.keys(props) : [];
  const required = Array.isArray(schema.required)
    ? schema.required.filter((r): r is string => typeof r === "string")
    : [];
  return { properties, required };
}

export function isObjectRootSchema(schema: unknown): schema is JsonSchema {
  if (!schema || typeof schema !== "object" || Array.isArray(schema)) return false;
  const t = (schema as JsonSchema).type;
  return t === "object";
}
