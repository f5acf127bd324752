// The one entry point from a model's tool call to a validated input: name ladder, deferred
// check, argument ladder (or strict parse for turns cut at the output limit), schema parse.
// The pipeline calls resolveCall and never re-implements any of it; the tool's own
// validateInput runs next, in the pipeline, because it needs the call's context.
import { respond, type RespondError } from "./errors";
import { parseArguments, type Rung } from "./repair/arguments";
import { didYouMean, type NameRung } from "./repair/names";
import type { SessionToolState } from "./session";
import type { Tool } from "./tool";
import { TOOL_SEARCH } from "./builtin/tool_search";
import { UNAVAILABLE } from "./registry";

export interface RawToolCall {
  /** The name exactly as the model wrote it. */
  name: string;
  /** The argument JSON exactly as streamed. */
  rawArguments: string;
}

export interface ResolveOptions {
  /** The response ended at the output limit: only a strict parse is accepted. */
  strict: boolean;
}

export type ResolvedCall =
  | {
      ok: true;
      tool: Tool;
      /** Parsed by the tool's schema (defaults applied); hand this to the tool. */
      input: unknown;
      /** The name or arguments had to be repaired to get here. */
      repaired: boolean;
      /** What was repaired, for the UI and audit (never sent to the model as an error). */
      notes: string[];
      nameRung: NameRung;
      argumentRungs: Rung[];
    }
  | {
      ok: false;
      /** The resolved tool name when the name resolved, else the model's own. */
      name: string;
      tool?: Tool;
      error: RespondError;
    };

export function resolveCall(tools: SessionToolState, call: RawToolCall, options: ResolveOptions): ResolvedCall {
  const catalog = tools.catalog;
  const match = catalog.names.resolve(call.name);
  if (!match.ok) {
    const outside = tools.registry.get(call.name);
    if (outside) {
      return {
        ok: false,
        name: call.name,
        error: respond(
          `${call.name} is not available on this session's ${tools.preset} tool surface. Use one of the tools you were given.`,
        ),
      };
    }
    const callable = match.candidates.filter((n) => tools.isCallable(n) || catalog.isDeferred(n));
    let message = didYouMean(call.name, callable);
    if (callable.length === 0) {
      const names = tools.tools().map((t) => t.name);
      message += ` Available tools: ${names.slice(0, 40).join(", ")}${names.length > 40 ? ", …" : ""}.`;
    }
    return { ok: false, name: call.name, error: respond(message, { candidates: callable }) };
  }
  const tool = catalog.get(match.name)!;
  const notes: string[] = [];
  if (match.rung !== "exact") notes.push(`tool name "${call.name}" resolved to "${tool.name}" (${match.rung})`);
  if (!tools.isCallable(tool.name)) {
    return {
      ok: false,
      name: tool.name,
      tool,
      error: respond(
        `${tool.name} is a deferred tool and its schema has not been loaded in this session, so it cannot be called yet. ` +
          `Call ${TOOL_SEARCH} with query "select:${tool.name}" to load it, then call ${tool.name} again.`,
        { deferred: true },
      ),
    };
  }
  if (tool.failClosed) return { ok: false, name: tool.name, tool, error: respond(UNAVAILABLE, { failClosed: true }) };

  const args = parseArguments(call.rawArguments, { strict: options.strict });
  let raw: unknown;
  let argNote = "";
  if (args.ok) {
    raw = args.value;
    if (args.repairs.length > 0) notes.push(`arguments repaired: ${args.repairs.join(", ")}`);
  } else if (args.reason === "too_large") {
    return {
      ok: false,
      name: tool.name,
      tool,
      error: respond(`The ${args.message}. Split the work into smaller ${tool.name} calls.`),
    };
  } else if (options.strict) {
    return {
      ok: false,
      name: tool.name,
      tool,
      error: respond(
        `Your response hit the output limit and the arguments of this ${tool.name} call were cut off, so it was not run. ` +
          `Resend the call with complete arguments; if its content is large, split it into several smaller calls.`,
        { truncated: true },
      ),
    };
  } else {
    raw = {};
    argNote = `The arguments were not usable JSON (${args.message}); they were treated as {}.`;
    notes.push(`arguments unusable (${args.reason}): treated as {}`);
  }

  const parsed = tool.parse(raw);
  if (!parsed.ok) {
    const message = argNote ? `${argNote}\n${parsed.error}` : parsed.error;
    const meta: Record<string, unknown> = { issues: parsed.issues };
    if (parsed.fieldMapping) Object.assign(meta, { field_mapping: parsed.fieldMapping, retry_required: true });
    return { ok: false, name: tool.name, tool, error: respond(message, meta) };
  }
  return {
    ok: true,
    tool,
    input: parsed.value,
    repaired: notes.length > 0,
    notes,
    nameRung: match.rung,
    argumentRungs: args.ok ? args.repairs : [],
  };
}
