// The pipeline's side of subagents (the task tool): which tools a subagent may call, and how a
// call outside that surface is refused. A subagent's calls otherwise take the parent's path
// (policy, audit, rows, events), with the task call's id on each row, event and audit entry.
import { inPreset } from "../tools/catalog";
import type { Tool } from "../tools/tool";
import type { ToolProvider } from "./contract";

/** Never offered to a subagent: it starts no subagents and activates no tools for the session. */
const NOT_FOR_SUBAGENTS = new Set(["task", "tool_search"]);

export function subagentTool(tool: Tool): boolean {
  return !NOT_FOR_SUBAGENTS.has(tool.name) && inPreset(tool, "readonly");
}

/** The read-only surface of the session's loaded (and activated) tools. */
export function subagentTools(tools: ToolProvider, sessionId: string): ReadonlySet<string> {
  try {
    return new Set(
      tools
        .forSession(sessionId)
        .tools()
        .filter(subagentTool)
        .map((t) => t.name),
    );
  } catch {
    return new Set();
  }
}

export const outsideSurface = (name: string) =>
  `${name} is not available to a subagent: subagents only read and search (they cannot write files, run commands, ` +
  `ask the person or start subagents). Finish the job with the read-only tools you have and say in your report what should change.`;

export const needsPerson = (name: string) =>
  `${name} needs the person's approval here, and a subagent cannot ask for it. Leave it out and say in your report that the parent agent should make this call.`;
