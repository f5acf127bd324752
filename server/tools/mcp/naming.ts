// Model-facing names of MCP tools: `mcp__<server>__<tool>`, cut to the providers' rule
// (^[a-zA-Z0-9_-]{1,64}$). Other characters become `_`; a name over 64 characters, or one that
// two different tools would share, ends in a short hash of the tool's identity instead. The
// result depends only on the set of tools, never on the order they arrived in, so the catalog's
// bytes stay the same from one start to the next.
import { createHash } from "node:crypto";

export interface McpToolRef {
  server: string;
  tool: string;
}

const MAX = 64;

const clean = (s: string) => s.replace(/[^a-zA-Z0-9_-]/g, "_");
const key = (r: McpToolRef) => `${r.server}\u0000${r.tool}`;
const hash = (r: McpToolRef) => createHash("sha256").update(key(r)).digest("hex").slice(0, 8);

function withHash(base: string, ref: McpToolRef): string {
  return `${base.slice(0, MAX - 9)}_${hash(ref)}`;
}

/** The name before collisions are settled. */
export function baseToolName(ref: McpToolRef): string {
  const base = `mcp__${clean(ref.server)}__${clean(ref.tool)}`;
  return base.length > MAX ? withHash(base, ref) : base;
}

/** A unique, provider-safe name for each tool, keyed by `server\0tool`. */
export function mcpToolNames(refs: readonly McpToolRef[]): Map<string, string> {
  const groups = new Map<string, McpToolRef[]>();
  for (const r of refs) {
    const b = baseToolName(r);
    const g = groups.get(b) ?? [];
    if (!g.some((x) => key(x) === key(r))) g.push(r);
    groups.set(b, g);
  }
  const names = new Map<string, string>();
  for (const [base, group] of groups) {
    // The first by identity keeps the plain name; the others are told apart by their hash.
    group.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
    group.forEach((r, i) => names.set(key(r), i === 0 ? base : withHash(base, r)));
  }
  return names;
}

export const toolKey = key;
