// Turns a schema failure into a message the model can act on: which fields are wrong, what
// each should be, and, for a known field mix-up (file_path for path), the mapping to use with
// retry_required so the model resends rather than guesses.
import type { z } from "zod";
import { objectShape, type JsonSchema } from "./schema";

export interface ParseIssue {
  path: string;
  message: string;
}

export interface ParseFailure {
  error: string;
  issues: ParseIssue[];
  /** wrong field → right field, for known mix-ups. */
  fieldMapping?: Record<string, string>;
  retryRequired?: boolean;
}

// Names models commonly use for the same thing; any member maps to the member the tool has.
const SYNONYMS: string[][] = [
  ["path", "file_path", "filepath", "file", "filename", "file_name", "target_file", "target_path"],
  ["command", "cmd", "command_line", "commandline", "script", "shell_command"],
  ["old_str", "old_string", "old_text", "oldstr", "search", "find", "original"],
  ["new_str", "new_string", "new_text", "newstr", "replace", "replacement"],
  ["content", "contents", "text", "file_text", "file_content", "body", "data"],
  ["pattern", "regex", "search_pattern", "grep", "glob"],
  ["query", "q", "search_query", "keywords"],
  ["url", "uri", "link", "href"],
  ["cwd", "dir", "directory", "folder", "working_directory", "workdir"],
];

const normalise = (key: string) =>
  key
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .replace(/-/g, "_")
    .toLowerCase();

/** Finds known field mix-ups: unknown input keys that stand for a missing schema property. */
export function findFieldMapping(
  input: unknown,
  schema: JsonSchema,
  aliases: Readonly<Record<string, string>>,
): Record<string, string> {
  if (!input || typeof input !== "object" || Array.isArray(input)) return {};
  const { properties } = objectShape(schema);
  const props = new Set(properties);
  const given = Object.keys(input);
  const missing = new Set(properties.filter((p) => !given.includes(p)));
  const mapping: Record<string, string> = {};
  for (const key of given) {
    if (props.has(key)) continue;
    const target = resolveAlias(key, missing, aliases);
    if (target) {
      mapping[key] = target;
      missing.delete(target);
    }
  }
  return mapping;
}

function resolveAlias(key: string, missing: Set<string>, aliases: Readonly<Record<string, string>>) {
  const declared = aliases[key];
  if (declared && missing.has(declared)) return declared;
  const norm = normalise(key);
  for (const m of missing) if (normalise(m) === norm) return m;
  const group = SYNONYMS.find((g) => g.includes(norm));
  if (group) for (const m of missing) if (group.includes(normalise(m))) return m;
  return undefined;
}

function pathString(path: readonly PropertyKey[]): string {
  let out = "";
  for (const p of path) out += typeof p === "number" ? `[${p}]` : out ? `.${String(p)}` : String(p);
  return out || "(arguments)";
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let cur = input;
  for (const p of path) {
    if (!cur || typeof cur !== "object") return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[p];
  }
  return cur;
}

function issueMessage(issue: z.core.$ZodIssue, input: unknown): string {
  if (issue.code === "invalid_type" && valueAt(input, issue.path) === undefined && issue.path.length > 0) {
    return `missing required field (expected ${issue.expected})`;
  }
  if (issue.code === "unrecognized_keys") return `unknown field(s) ${issue.keys.join(", ")}: remove them`;
  return issue.message.replace(/^Invalid input: /, "");
}

function typeLabel(s: unknown): string {
  if (!s || typeof s !== "object") return "any";
  const node = s as JsonSchema;
  if (Array.isArray(node.enum)) return node.enum.map((v) => JSON.stringify(v)).join("|");
  if (Array.isArray(node.type)) return node.type.join("|");
  if (typeof node.type === "string") return node.type === "array" ? `array of ${typeLabel(node.items)}` : node.type;
  if (Array.isArray(node.anyOf)) return node.anyOf.map(typeLabel).join("|");
  return "any";
}

/** One line listing the parameters, e.g. `path (string, required), limit (integer)`. */
export function describeParameters(schema: JsonSchema): string {
  const { properties, required } = objectShape(schema);
  const props = (schema.properties ?? {}) as Record<string, unknown>;
  if (properties.length === 0) return "none";
  return properties.map((p) => `${p} (${typeLabel(props[p])}${required.includes(p) ? ", required" : ""})`).join(", ");
}

export function formatParseError(
  tool: { name: string; jsonSchema: JsonSchema; fieldAliases: Readonly<Record<string, string>> },
  input: unknown,
  error: z.ZodError,
): ParseFailure {
  let schema: JsonSchema = {};
  try {
    schema = tool.jsonSchema;
  } catch {
    /* unexpressible schema: still report the issues */
  }
  const issues = error.issues.map((i) => ({ path: pathString(i.path), message: issueMessage(i, input) }));
  const mapping = findFieldMapping(input, schema, tool.fieldAliases);
  const lines = [`Invalid arguments for ${tool.name}:`, ...issues.map((i) => `- ${i.path}: ${i.message}`)];
  const mapped = Object.entries(mapping);
  if (mapped.length > 0) {
    lines.push(
      `Wrong field names: ${mapped.map(([from, to]) => `use "${to}" instead of "${from}"`).join("; ")}.`,
      JSON.stringify({ retry_required: true, field_mapping: mapping }),
    );
  }
  lines.push(`Expected parameters: ${describeParameters(schema)}. Fix these fields and call ${tool.name} again.`);
  return {
    error: lines.join("\n"),
    issues,
    ...(mapped.length > 0 ? { fieldMapping: mapping, retryRequired: true } : {}),
  };
}
