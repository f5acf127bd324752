// The registry: every tool the server knows, built-in or external. A tool with a bad name, a
// schema whose root is not an object, or a schema that cannot be expressed is replaced by a
// fail-closed stand-in, so one bad tool never takes the others down. Duplicates are settled
// the same way whatever the registration order: a built-in beats an external tool; two tools
// of the same source under one name both give way to a stand-in.
import { z } from "zod";
import { buildTool, type Tool, type ToolSource } from "./tool";
import { isObjectRootSchema } from "./schema";
import { Catalog, inPreset, type Preset } from "./catalog";

const NONE: ReadonlySet<string> = new Set();
export const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
export const UNAVAILABLE = "Unavailable: this tool failed to initialise and is fail-closed. Do not call it.";

export interface RegistryProblem {
  name: string;
  source: ToolSource;
  reason: string;
}

/** A tool whose every call answers unavailable; it holds the place of one that failed. */
export function failClosedTool(name: string, source: ToolSource, deferLoading = false): Tool {
  return buildTool<Record<string, unknown>>(
    {
      name,
      description: UNAVAILABLE,
      capabilities: [],
      executor: "server",
      deferLoading,
      approvalFor: () => "required",
      async execute() {
        return { output: UNAVAILABLE, isError: true };
      },
    },
    { input: z.looseObject({}), jsonSchema: () => ({ type: "object", properties: {} }), source, failClosed: true },
  );
}

/** A provider-safe name for the stand-in of a tool whose own name is invalid. */
export function safeName(name: unknown): string {
  const s = typeof name === "string" ? name.replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, 64) : "";
  return s || "unnamed_tool";
}

export class ToolRegistry {
  private readonly registrations: Tool[] = [];
  private readonly issues: RegistryProblem[] = [];
  private readonly catalogs = new Map<string, Catalog>();
  private merged?: Map<string, Tool>;

  constructor(tools: readonly Tool[] = []) {
    for (const t of tools) this.register(t);
  }

  /** Registers a tool, or its fail-closed stand-in when it is unfit. Returns what was registered. */
  register(tool: Tool): Tool {
    const source: ToolSource = tool?.source === "external" ? "external" : "builtin";
    const reason = checkTool(tool);
    const registered = reason ? failClosedTool(safeName(tool?.name), source, tool?.deferLoading === true) : tool;
    if (reason) this.issues.push({ name: String(tool?.name), source, reason });
    this.registrations.push(registered);
    this.merged = undefined;
    this.catalogs.clear();
    return registered;
  }

  /** Takes out tools `register` returned (an MCP server's tool list changed or it went away). */
  unregister(tools: readonly Tool[]): void {
    const gone = new Set(tools);
    const kept = this.registrations.filter((t) => !gone.has(t));
    if (kept.length === this.registrations.length) return;
    this.registrations.splice(0, this.registrations.length, ...kept);
    this.merged = undefined;
    this.catalogs.clear();
  }

  /** Tools refused at registration or by a duplicate name, for the start-up log. */
  problems(): readonly RegistryProblem[] {
    this.resolved();
    return this.issues;
  }

  /** Every tool after deduplication, loaded or deferred. */
  tools(): Tool[] {
    return [...this.resolved().values()];
  }

  get(name: string): Tool | undefined {
    return this.resolved().get(name);
  }

  /**
   * The cached catalog of a surface, less the tools in `without` (those an org policy denies
   * outright, policy-catalog.ts): same tool set and same exclusions, same bytes.
   */
  catalog(preset: Preset = "coding", without: ReadonlySet<string> = NONE): Catalog {
    const key = without.size === 0 ? preset : `${preset}\0${[...without].sort().join("\0")}`;
    let c = this.catalogs.get(key);
    if (!c) {
      // Kept small: one entry per surface and distinct policy exclusion in use.
      if (this.catalogs.size >= 64) this.catalogs.clear();
      c = new Catalog(this.tools().filter((t) => inPreset(t, preset) && !without.has(t.name)));
      this.catalogs.set(key, c);
    }
    return c;
  }

  private resolved(): Map<string, Tool> {
    if (this.merged) return this.merged;
    const groups = new Map<string, Tool[]>();
    for (const t of this.registrations) groups.set(t.name, [...(groups.get(t.name) ?? []), t]);
    const merged = new Map<string, Tool>();
    for (const [name, group] of groups) {
      const builtins = group.filter((t) => t.source === "builtin");
      const winners = builtins.length > 0 ? builtins : group;
      const distinct = new Set(winners);
      if (distinct.size === 1) merged.set(name, winners[0]);
      else {
        merged.set(
          name,
          failClosedTool(
            name,
            winners[0].source,
            winners.some((t) => t.deferLoading),
          ),
        );
        const key = `${name}\u0000duplicate`;
        if (!this.issues.some((p) => `${p.name}\u0000${p.reason}` === key)) {
          this.issues.push({ name, source: winners[0].source, reason: "duplicate" });
        }
      }
    }
    this.merged = merged;
    return merged;
  }
}

/** Why a tool cannot be offered, or undefined when it is fit. */
function checkTool(tool: Tool): string | undefined {
  if (!tool || typeof tool !== "object") return "not a tool";
  if (typeof tool.name !== "string" || !TOOL_NAME.test(tool.name)) return `invalid name (must match ${TOOL_NAME})`;
  if (typeof tool.description !== "string" || tool.description.trim() === "") return "empty description";
  let schema: unknown;
  try {
    schema = tool.jsonSchema;
  } catch (e) {
    return `schema cannot be expressed as JSON Schema: ${e instanceof Error ? e.message : String(e)}`;
  }
  if (!isObjectRootSchema(schema)) return "input schema root is not an object";
  return undefined;
}
