// External tools (MCP and the like) arrive with a JSON Schema instead of a zod one. They get the
// same Tool interface as built-ins: the schema is sanitised for the provider, and arguments are
// validated with a zod schema derived from it (a loose object when it cannot be derived).
import { z } from "zod";
import { buildTool, type Tool, type ToolDefinition } from "./tool";
import { sanitizeSchema } from "./sanitize";
import type { JsonSchema } from "./schema";

export interface ExternalToolDefinition extends Omit<ToolDefinition<Record<string, unknown>>, "executor"> {
  /** The JSON Schema as the external server published it. */
  inputSchema: unknown;
  executor?: ToolDefinition<Record<string, unknown>>["executor"];
  /** The MCP server the tool comes from, as configured; policy rules match it (`mcpServer`). */
  mcpServer?: string;
}

export type ExternalTool = Tool<Record<string, unknown>> & { readonly mcpServer?: string };

export function defineExternalTool(def: ExternalToolDefinition): ExternalTool {
  const sanitized = sanitizeSchema(def.inputSchema) as JsonSchema;
  if (sanitized && typeof sanitized === "object") delete sanitized.$schema;
  let input: z.ZodType<Record<string, unknown>>;
  try {
    input = z.fromJSONSchema(sanitized as never) as z.ZodType<Record<string, unknown>>;
  } catch {
    input = z.looseObject({});
  }
  const tool = buildTool(
    { ...def, executor: def.executor ?? "server" },
    { input, jsonSchema: () => sanitized, source: "external" },
  );
  // policy/decide.ts reads `mcpServer` off the tool rather than parsing it back out of the name.
  return def.mcpServer ? Object.assign(tool, { mcpServer: def.mcpServer }) : tool;
}
