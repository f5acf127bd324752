// The kept tool-search corpus (bench/data): several hundred tools of real MCP servers, named as
// Quiver names them (mcp__<server>__<tool>), mixed with Quiver's built-ins (their .txt
// descriptions), and labelled queries written from the descriptions in other words.
import { readFileSync, readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { mcpToolNames } from "../../server/tools/mcp/naming";

export interface CorpusTool {
  name: string;
  description: string;
}

export interface LabelledQuery {
  query: string;
  relevant: Set<string>;
}

const data = (file: string) => new URL(`../data/${file}`, import.meta.url);
const rows = (file: string) =>
  readFileSync(data(file), "utf8")
    .split("\n")
    .filter((l) => l.trim() && !l.startsWith("#"))
    .map((l) => l.split("\t"));

export function loadCorpus(): { tools: CorpusTool[]; queries: LabelledQuery[] } {
  const mcp = rows("mcp-tools.tsv").map(([server, tool, description]) => ({ server, tool, description }));
  const names = mcpToolNames(mcp);
  const byRef = new Map(mcp.map((t) => [`${t.server}.${t.tool}`, names.get(`${t.server}\u0000${t.tool}`)!]));
  const tools: CorpusTool[] = mcp.map((t) => ({
    name: byRef.get(`${t.server}.${t.tool}`)!,
    description: t.description,
  }));
  const builtinDir = fileURLToPath(new URL("../../server/tools/builtin/", import.meta.url));
  for (const file of readdirSync(builtinDir).sort()) {
    if (!file.endsWith(".txt") || file === "tool_search.txt") continue;
    tools.push({ name: file.slice(0, -4), description: readFileSync(`${builtinDir}${file}`, "utf8").trim() });
  }
  const known = new Set(tools.map((t) => t.name));
  const queries = rows("tool-queries.tsv").map(([query, answers]) => {
    const relevant = new Set(
      answers.split(",").map((a) => (a.includes(".") ? byRef.get(a) : known.has(a) ? a : undefined) ?? `unknown:${a}`),
    );
    const unknown = [...relevant].filter((n) => !known.has(n));
    if (unknown.length > 0)
      throw new Error(`bench/data/tool-queries.tsv: "${query}" names tools not in the corpus: ${unknown.join(", ")}`);
    return { query, relevant };
  });
  return { tools, queries };
}
