// The pipeline's view of the slot's resolveCall: the tool, its validated input, and whether the
// arguments (not the name) needed repair, which the truncation gate cares about.
import { resolveCall } from "../tools/resolve";
import type { Tool, ToolServices } from "../tools/tool";
import type { PipelineDeps } from "./contract";
import type { SpillStore } from "../services/spills";

export type Resolution =
  | { ok: true; tool: Tool; input: unknown; name: string; argumentsRepaired: boolean; notes: string[] }
  | { ok: false; name: string; error: string };

export function resolve(
  deps: Pick<PipelineDeps, "tools">,
  sessionId: string,
  call: { name: string; rawArguments: string },
  strict: boolean,
): Resolution {
  try {
    const r = resolveCall(deps.tools.forSession(sessionId), call, { strict });
    if (!r.ok) return { ok: false, name: r.name, error: r.error.message };
    return {
      ok: true,
      tool: r.tool,
      input: r.input,
      name: r.tool.name,
      argumentsRepaired: r.argumentRungs.length > 0,
      notes: r.notes,
    };
  } catch (e) {
    return {
      ok: false,
      name: call.name,
      error: `${call.name} could not be resolved: ${e instanceof Error ? e.message : String(e)}`,
    };
  }
}

/** A tool by its exact name in the session (settling a stored call after a restart). */
export function toolByName(deps: Pick<PipelineDeps, "tools">, sessionId: string, name: string): Tool | undefined {
  try {
    return deps.tools.forSession(sessionId).catalog.get(name);
  } catch {
    return undefined;
  }
}

/** What executor:"server" tools of this session get: spills, tool_search, and any extras. */
export function servicesFor(
  deps: Pick<PipelineDeps, "tools" | "toolServices">,
  spills: SpillStore,
  sessionId: string,
): ToolServices {
  let toolSearch: ToolServices["toolSearch"];
  try {
    toolSearch = deps.tools.forSession(sessionId);
  } catch {
    toolSearch = undefined;
  }
  return {
    spills: {
      read: (ref, range) => spills.read(ref, { ...range, sessionId }),
      lines: (ref, q) => spills.lines(ref, { ...q, sessionId }),
      store: (bytes, at) => spills.store({ sessionId, toolCallId: at.toolCallId, bytes }),
    },
    ...(toolSearch ? { toolSearch } : {}),
    ...deps.toolServices?.(sessionId),
  };
}
