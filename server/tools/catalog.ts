// The catalog: what the model is offered. Built-ins sorted by name, then external tools sorted
// by name; deferred tools are left out of the prefix and listed by name in tool_search's
// description. Each entry is serialized once and the whole catalog is cached, so the same tool
// set always yields the same bytes and the provider's prompt cache keeps hitting.
import type { Tool } from "./tool";
import { NameIndex } from "./repair/names";
import { Bm25Index } from "./search/bm25";
import { toolSearchTool, TOOL_SEARCH } from "./builtin/tool_search";

/** Anthropic's shape; other providers' adapters map it field by field. */
export interface CatalogEntry {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
}

export type Preset = "coding" | "readonly";

const READ_ONLY_CAPS = new Set(["ReadsFiles", "Network"]);

/** Read-only surface: tools that neither write, execute nor need a person at the keyboard. */
export function inPreset(tool: Tool, preset: Preset): boolean {
  if (preset === "coding") return true;
  // An MCP tool's capabilities cannot say it changes things elsewhere: only its read-only hint
  // keeps it on this surface.
  if ((tool as { mcpServer?: string }).mcpServer !== undefined && !tool.isReadOnly({})) return false;
  return tool.capabilities.every((c) => READ_ONLY_CAPS.has(c));
}

export const byName = (a: Tool, b: Tool) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

export class Catalog {
  /** Sent in full in every request, in this order. */
  readonly loaded: readonly Tool[];
  /** Registered but left out of the first request until tool_search activates them. */
  readonly deferred: readonly Tool[];
  readonly entries: readonly CatalogEntry[];
  /** The serialized prefix: `[entry,entry,...]`. */
  readonly json: string;
  readonly names: NameIndex;
  private readonly byNameMap = new Map<string, Tool>();
  private readonly deferredSet: ReadonlySet<Tool>;
  private readonly entryJsonCache = new Map<string, string>();
  private index?: Bm25Index;

  /** `tools` must be unique by name; order does not matter. */
  constructor(tools: readonly Tool[]) {
    const sorted = [...tools]
      .filter((t) => t.name !== TOOL_SEARCH)
      .sort((a, b) => {
        if (a.source !== b.source) return a.source === "builtin" ? -1 : 1;
        return byName(a, b);
      });
    const deferred = sorted.filter((t) => t.deferLoading && !t.alwaysLoad);
    const loaded = sorted.filter((t) => !(t.deferLoading && !t.alwaysLoad));
    if (deferred.length > 0) {
      // tool_search is a built-in: it takes its sorted place among them
      const search = toolSearchTool(deferred);
      const at = loaded.findIndex((t) => t.source !== "builtin" || byName(search, t) < 0);
      loaded.splice(at < 0 ? loaded.length : at, 0, search);
    }
    this.loaded = Object.freeze(loaded);
    this.deferred = Object.freeze(deferred);
    this.deferredSet = new Set(deferred);
    for (const t of [...loaded, ...deferred]) this.byNameMap.set(t.name, t);
    this.entries = Object.freeze(loaded.map(entryOf));
    this.json = `[${loaded.map((t) => this.entryJson(t)).join(",")}]`;
    this.names = new NameIndex([...this.byNameMap.keys()]);
  }

  get(name: string): Tool | undefined {
    return this.byNameMap.get(name);
  }

  isDeferred(name: string): boolean {
    const t = this.byNameMap.get(name);
    return !!t && this.deferredSet.has(t);
  }

  /** The serialized entry of one tool, cached (also used for the activated tail). */
  entryJson(tool: Tool): string {
    let s = this.entryJsonCache.get(tool.name);
    if (s === undefined) {
      s = JSON.stringify(entryOf(tool));
      this.entryJsonCache.set(tool.name, s);
    }
    return s;
  }

  /** BM25 over the deferred tools, built on first use. */
  search(query: string, limit: number): { tool: Tool; score: number }[] {
    this.index ??= new Bm25Index(
      this.deferred.map((t) => [
        { text: t.name, weight: 3 },
        { text: t.searchHint ?? "", weight: 2 },
        { text: t.description, weight: 1 },
      ]),
    );
    return this.index.search(query, limit).map((h) => ({ tool: this.deferred[h.doc], score: h.score }));
  }
}

export function entryOf(tool: Tool): CatalogEntry {
  return { name: tool.name, description: tool.description, input_schema: tool.jsonSchema };
}
