// Sanitises JSON Schemas that come from outside (MCP servers) before they are sent to a model
// provider, which rejects or misreads some common shapes: `anyOf: [X, {type: "null"}]` is folded
// into a nullable X, objects without `properties` get an empty one, and `required` entries that
// name no property are dropped. The input is never mutated.
import type { JsonSchema } from "./schema";

const isPlain = (v: unknown): v is JsonSchema => !!v && typeof v === "object" && !Array.isArray(v);
const isNullSchema = (v: unknown) => isPlain(v) && v.type === "null" && Object.keys(v).length === 1;

// Keywords whose value is one schema, a list of schemas, or a map of schemas.
const ONE = ["items", "additionalProperties", "not", "contains", "propertyNames", "if", "then", "else"];
const MANY = ["anyOf", "oneOf", "allOf", "prefixItems"];
const MAP = ["properties", "$defs", "definitions", "patternProperties"];

export function sanitizeSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(sanitizeSchema);
  if (!isPlain(schema)) return schema;
  let node: JsonSchema = {};
  for (const [k, v] of Object.entries(schema)) {
    if (ONE.includes(k)) node[k] = isPlain(v) ? sanitizeSchema(v) : v;
    else if (MANY.includes(k) && Array.isArray(v)) node[k] = v.map(sanitizeSchema);
    else if (MAP.includes(k) && isPlain(v)) {
      node[k] = Object.fromEntries(Object.entries(v).map(([name, s]) => [name, sanitizeSchema(s)]));
    } else node[k] = v;
  }
  node = foldNullable(node, "anyOf");
  node = foldNullable(node, "oneOf");
  const isObject = node.type === "object" || (Array.isArray(node.type) && node.type.includes("object"));
  if (isObject && !isPlain(node.properties)) node.properties = {};
  if (Array.isArray(node.required)) {
    const props = isPlain(node.properties) ? node.properties : {};
    const required = [
      ...new Set(node.required.filter((r): r is string => typeof r === "string" && Object.hasOwn(props, r))),
    ];
    if (required.length > 0) node.required = required;
    else delete node.required;
  }
  return node;
}

/** `{anyOf: [X, {type: "null"}], ...rest}` → `{...X, type: [X.type, "null"], ...rest}` where X has a type. */
function foldNullable(node: JsonSchema, key: "anyOf" | "oneOf"): JsonSchema {
  const list = node[key];
  if (!Array.isArray(list) || list.length !== 2) return node;
  const nullAt = list.findIndex(isNullSchema);
  if (nullAt < 0) return node;
  const other = list[1 - nullAt];
  if (!isPlain(other) || isNullSchema(other)) return node;
  let type: unknown;
  if (typeof other.type === "string") type = [other.type, "null"];
  else if (Array.isArray(other.type)) type = other.type.includes("null") ? other.type : [...other.type, "null"];
  else return node; // no type to widen ($ref, bare enum): leave the union as it is
  const { [key]: _dropped, ...rest } = node;
  const folded: JsonSchema = { ...other, ...rest, type };
  if (Array.isArray(other.enum) && !other.enum.includes(null)) folded.enum = [...other.enum, null];
  return folded;
}
