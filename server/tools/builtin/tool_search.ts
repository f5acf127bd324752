// tool_search: finds deferred tools by BM25 over name, description and search hints, and
// activates the hits for the rest of the session (their schemas are appended at the catalog's
// tail). The deferred tools' names and one-line summaries are listed in its description.
import { readFileSync } from "node:fs";
import { z } from "zod";
import { defineTool, type Tool } from "../tool";
import { respond } from "../errors";

export const TOOL_SEARCH = "tool_search";
export const DEFAULT_SEARCH_LIMIT = 8;

const base = readFileSync(new URL("./tool_search.txt", import.meta.url), "utf8").trim();

const input = z.object({
  query: z
    .string()
    .min(1)
    .describe('Keywords for the capability you need, or "select:name1,name2" to load tools by name.'),
  limit: z
    .number()
    .int()
    .min(1)
    .max(25)
    .optional()
    .describe(`How many tools to load at most (default ${DEFAULT_SEARCH_LIMIT}).`),
});

/** The first sentence of a description, at most 100 characters, on one line. */
export function oneLine(description: string): string {
  const flat = description.replace(/\s+/g, " ").trim();
  const sentence = /^(.+?[.!?])(?:\s|$)/.exec(flat)?.[1] ?? flat;
  return sentence.length > 100 ? `${sentence.slice(0, 99)}…` : sentence;
}

/** tool_search with the deferred tools listed in its description (the catalog builds this). */
export function toolSearchTool(deferred: readonly Tool[]): Tool<z.infer<typeof input>> {
  const listing = deferred.map((t) => `- ${t.name}: ${oneLine(t.description)}`).join("\n");
  return defineTool({
    name: TOOL_SEARCH,
    description: deferred.length > 0 ? `${base}\n\nDeferred tools:\n${listing}` : base,
    input,
    capabilities: [],
    executor: "server",
    searchHint: "find load discover tools",
    alwaysLoad: true,
    isReadOnly: () => true,
    // activation order is part of the catalog's bytes: keep searches in slot order
    isConcurrencySafe: () => false,
    summarize: (i) => `Search tools: ${i.query}`,
    async execute({ query, limit }, ctx) {
      const search = ctx.services.toolSearch;
      if (!search) throw respond("tool_search is not available in this session: no deferred tools can be loaded.");
      const hits = search.searchAndActivate(query, limit ?? DEFAULT_SEARCH_LIMIT);
      if (hits.length === 0) {
        return {
          output: `No deferred tools match "${query}". Try other keywords, or pick a name from the list in tool_search's description and pass "select:<name>".`,
        };
      }
      const lines = hits.map((h) => `- ${h.name}: ${oneLine(h.description)}`);
      return {
        output: `Loaded ${hits.length} tool(s); call them directly from now on:\n${lines.join("\n")}`,
        meta: { activated: hits.map((h) => h.name) },
      };
    },
  });
}
