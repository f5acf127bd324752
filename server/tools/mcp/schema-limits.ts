// How large and how deep an MCP tool's input schema may be. A server's schema goes into every
// model request that offers the tool and is walked recursively (sanitize.ts, zod): one of
// 20,000 nested levels overflowed the stack while the tool set was built, and one of megabytes
// (a 300,000-value enum) would make every request of every session too large. Such a tool is
// left out and its server's other tools kept; measured without recursion, so the check itself
// cannot overflow.

/** Bytes of an input schema as JSON, past which the tool is left out. */
export const MAX_SCHEMA_BYTES = 64 * 1024;
/** Nesting of objects and arrays in an input schema, past which the tool is left out. */
export const MAX_SCHEMA_DEPTH = 64;

/** Why the schema is unfit, or undefined when it is within the limits. */
export function schemaProblem(schema: unknown): string | undefined {
  const stack: { value: unknown; depth: number }[] = [{ value: schema, depth: 1 }];
  let bytes = 0;
  while (stack.length > 0) {
    const { value, depth } = stack.pop()!;
    if (value === null || typeof value !== "object") {
      bytes += typeof value === "string" ? value.length + 2 : String(value).length;
      if (bytes > MAX_SCHEMA_BYTES) return `its input schema is over ${MAX_SCHEMA_BYTES / 1024} KB`;
      continue;
    }
    if (depth > MAX_SCHEMA_DEPTH) return `its input schema nests deeper than ${MAX_SCHEMA_DEPTH} levels`;
    const entries = Array.isArray(value) ? value.map((v) => ["", v] as const) : Object.entries(value);
    for (const [k, v] of entries) {
      bytes += k.length + 4;
      stack.push({ value: v, depth: depth + 1 });
    }
    if (bytes > MAX_SCHEMA_BYTES) return `its input schema is over ${MAX_SCHEMA_BYTES / 1024} KB`;
  }
  return undefined;
}
