// One session's view of the tool catalog: the registry's cached prefix plus the deferred tools
// tool_search activated, appended at the tail in activation order and never re-sorted, so
// every earlier byte of the request stays the same and the prompt cache keeps hitting.
// The engine persists `activated` with the session and passes it back to restore the state.
// `hidden`: tools this session is not offered (the edit tools its model does not get,
// edit-tools.ts), fixed for the state's life so the offered bytes are too. A call of one still
// resolves and runs under the same checks (a conversation carried over from another model).
import type { Catalog, CatalogEntry, Preset } from "./catalog";
import type { ToolRegistry } from "./registry";
import type { Tool, ToolSearchHit, ToolSearchService } from "./tool";
import { TOOL_SEARCH } from "./builtin/tool_search";

export class SessionToolState implements ToolSearchService {
  private readonly order: string[] = [];
  private cache?: { catalog: Catalog; count: number; json: string };

  constructor(
    readonly registry: ToolRegistry,
    readonly preset: Preset = "coding",
    activated: readonly string[] = [],
    /** Told of every activation after construction, so the owner can persist it. */
    private readonly onActivate?: (added: readonly string[]) => void,
    readonly hidden: ReadonlySet<string> = new Set(),
  ) {
    this.restoring = true;
    this.activate(activated);
    this.restoring = false;
  }

  private restoring = false;

  get catalog(): Catalog {
    return this.registry.catalog(this.preset);
  }

  /** What the model is sent: the catalog less the hidden tools. */
  private get offered(): Catalog {
    return this.registry.catalog(this.preset, this.hidden);
  }

  /** Names activated so far, in order (persist these to restore the session). */
  get activated(): readonly string[] {
    return this.order;
  }

  /** Activates deferred tools by name; returns the ones newly activated, in order. */
  activate(names: readonly string[]): string[] {
    const catalog = this.catalog;
    const added: string[] = [];
    for (const name of names) {
      if (catalog.isDeferred(name) && !this.order.includes(name)) {
        this.order.push(name);
        added.push(name);
      }
    }
    if (added.length > 0 && !this.restoring) this.onActivate?.(added);
    return added;
  }

  /** Loaded tools first (catalog order), then activated ones in activation order. */
  tools(): Tool[] {
    return [...this.catalog.loaded, ...this.tail()];
  }

  /** What the model is offered; `without`: tools the org policy denies outright (policy-catalog.ts). */
  entries(without?: ReadonlySet<string>): CatalogEntry[] {
    const catalog =
      without && without.size > 0
        ? this.registry.catalog(this.preset, new Set([...this.hidden, ...without]))
        : this.offered;
    const tail = this.tail().filter((t) => !without?.has(t.name));
    return [...catalog.entries, ...tail.map((t) => JSON.parse(catalog.entryJson(t)) as CatalogEntry)];
  }

  /** The serialized tool list for the next request: the cached prefix plus the tail. */
  json(): string {
    const catalog = this.offered;
    const tail = this.tail();
    if (this.cache && this.cache.catalog === catalog && this.cache.count === tail.length) return this.cache.json;
    const json =
      tail.length === 0
        ? catalog.json
        : `${catalog.json.slice(0, -1)}${catalog.loaded.length > 0 ? "," : ""}${tail.map((t) => catalog.entryJson(t)).join(",")}]`;
    this.cache = { catalog, count: tail.length, json };
    return json;
  }

  /** True when the model has been sent this tool's schema (loaded or activated). */
  isCallable(name: string): boolean {
    const catalog = this.catalog;
    if (!catalog.get(name)) return false;
    return !catalog.isDeferred(name) || this.order.includes(name);
  }

  searchAndActivate(query: string, limit: number): ToolSearchHit[] {
    const catalog = this.catalog;
    const select = /^\s*select:(.*)$/i.exec(query);
    let hits: { tool: Tool; score: number }[];
    if (select) {
      hits = select[1]
        .split(",")
        .map((n) => n.trim())
        .filter((n, i, all) => n && all.indexOf(n) === i)
        .map((n) => catalog.get(n) ?? catalog.get(resolveDeferredName(catalog, n) ?? ""))
        .filter((t): t is Tool => !!t && t.name !== TOOL_SEARCH)
        .slice(0, limit)
        .map((tool) => ({ tool, score: 1 }));
    } else hits = catalog.search(query, limit);
    this.activate(hits.map((h) => h.tool.name));
    return hits.map((h) => ({ name: h.tool.name, description: h.tool.description, score: h.score }));
  }

  // Activated names whose tools left the catalog (an MCP server went away) drop out of the tail.
  private tail(): Tool[] {
    const catalog = this.catalog;
    return this.order.map((n) => catalog.get(n)).filter((t): t is Tool => !!t && catalog.isDeferred(t.name));
  }
}

function resolveDeferredName(catalog: Catalog, name: string): string | undefined {
  const m = catalog.names.resolve(name);
  return m.ok ? m.name : undefined;
}
