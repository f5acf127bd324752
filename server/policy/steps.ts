// The calls inside a call. tool_program runs read-only tools as its steps and tool_transaction
// edits, writes and runs checks as its own: a rule naming `read_file`, `write_file` or
// `run_check` (or a capability only a step has) means those steps as well, or a deny of the
// single tool would be walked around by wrapping it in one of these. Each step is judged as the
// call of its own tool would be; its deny or ask decides for the whole call, its allow does not
// (the wrapper's own rules and approval level still speak for it).
import type { Capability, Tool } from "../tools/tool";
import type { PolicySubject } from "./rules";

// What each step's tool declares (tests check them against the tools themselves); the tools are
// not imported, as they import the pipeline, which imports this.
export const STEP_CAPABILITIES: Readonly<Record<string, readonly Capability[]>> = {
  read_file: ["ReadsFiles"],
  search_text: ["ReadsFiles"],
  list_files: ["ReadsFiles"],
  glob: ["ReadsFiles"],
  git_diff: ["ReadsFiles"],
  edit_file: ["ReadsFiles", "WritesFiles"],
  write_file: ["ReadsFiles", "WritesFiles"],
  apply_patch: ["ReadsFiles", "WritesFiles"],
  run_check: ["ExecutesCode"],
};

export const STEP_WRAPPERS: ReadonlySet<string> = new Set(["tool_program", "tool_transaction"]);

/** Each step of a built-in wrapper as the policy sees a call of its tool; none for other tools. */
export function stepSubjects(tool: Tool, input: unknown): { step: number; subject: PolicySubject }[] {
  if (tool.source !== "builtin" || !STEP_WRAPPERS.has(tool.name)) return [];
  const steps = input && typeof input === "object" ? (input as { steps?: unknown }).steps : undefined;
  if (!Array.isArray(steps)) return [];
  return steps.map((s, i) => {
    const op = s && typeof s === "object" ? (s as { op?: unknown }).op : undefined;
    const name = typeof op === "string" ? op : tool.name;
    // An op this table does not know is judged with everything its wrapper may do.
    return {
      step: i + 1,
      subject: { tool: name, capabilities: STEP_CAPABILITIES[name] ?? tool.capabilities, hosts: [] },
    };
  });
}

/** The steps' own inputs, as their tools would be called (what each names to read or write). */
export function stepInputs(input: unknown): unknown[] {
  const steps = input && typeof input === "object" ? (input as { steps?: unknown }).steps : undefined;
  return Array.isArray(steps) ? steps : [];
}
