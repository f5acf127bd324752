// A session's mode: how much the agent may do without a card, inside what the org policy allows.
//   plan          the read-only tool surface (catalog.ts's "readonly" preset): every other call is
//                 refused with a respond error; exit_plan_mode asks the person to accept the plan.
//   ask           today's behaviour: a call whose tool or input needs approval shows a card.
//   accept-edits  a built-in file edit at the `suggest` level (a write inside the workspace that
//                 steers no git) runs without a card; commands, network and the rest still ask.
//   auto          everything the org policy lets through runs without a card.
// The org bounds every mode: its denies and its ask rules hold in all of them, and a mode it
// forbids (Org.forbiddenModes) is taken as "ask" at the next dispatch. The tools offered to the
// model never change with the mode (that would break the cached prompt prefix): the pipeline
// judges each call instead (pipeline/plan.ts), and the engine tells the model the mode in the
// newest message (engine/mode-note.ts).
import { z } from "zod";
import { MODES, SessionMode } from "../protocol/modes";
import { parseJsonText } from "../db/json-text";
import type { Tool } from "../tools/tool";
import { inPreset } from "../tools/catalog";
import type { CallView, Decision } from "./decide";

export { MODES };
export const Mode = SessionMode;
export type Mode = SessionMode;
export const DEFAULT_MODE: Mode = "ask";
export const EXIT_PLAN_MODE = "exit_plan_mode";

export const MODE_LABELS: Record<Mode, string> = {
  plan: "Plan",
  ask: "Ask",
  "accept-edits": "Accept edits",
  auto: "Auto",
};

/** The modes an org may forbid: "ask" always stays, as the fallback. */
export const ForbiddenModes = z.array(Mode.exclude(["ask"])).max(3);

/** Org.forbiddenModes as stored, parsed or as JSON text (SQLite's column read through the
 *  driver), read leniently: an entry that is not a forbiddable mode is dropped. A value that is
 *  no list at all (a corrupt column, text that does not parse) fails closed: every mode but ask
 *  is forbidden, since what the org meant to forbid cannot be told. No org row (`undefined`)
 *  forbids nothing. */
export function parseForbidden(value: unknown): Mode[] {
  if (value === undefined) return [];
  if (typeof value === "string") value = parseJsonText(value, () => undefined);
  const list: readonly unknown[] = Array.isArray(value) ? value : MODES;
  return MODES.filter((m) => m !== "ask" && list.includes(m));
}

/** The mode a call is judged in: the stored one unless it is unknown or the org forbids it. */
export function effectiveMode(stored: string | null | undefined, forbidden: readonly Mode[]): Mode {
  const parsed = Mode.safeParse(stored);
  if (!parsed.success || forbidden.includes(parsed.data)) return DEFAULT_MODE;
  return parsed.data;
}

/** Shift+Tab's order (as in Claude Code: the default, accept edits, plan), then auto; forbidden ones skipped. */
const CYCLE: readonly Mode[] = ["ask", "accept-edits", "plan", "auto"];
export function nextMode(current: Mode, forbidden: readonly Mode[]): Mode {
  const from = CYCLE.indexOf(current);
  for (let i = 1; i <= CYCLE.length; i++) {
    const m = CYCLE[(from + i) % CYCLE.length];
    if (!forbidden.includes(m)) return m;
  }
  return DEFAULT_MODE;
}

/** A person at the keyboard is not a change: a question or the plan's own card may be asked in plan mode. */
function planAllows(tool: Tool): boolean {
  if (tool.name === EXIT_PLAN_MODE) return true;
  if (inPreset(tool, "readonly")) return true;
  return (
    tool.source === "builtin" &&
    tool.capabilities.length > 0 &&
    tool.capabilities.every((c) => c === "Interactive" || c === "ReadsFiles")
  );
}

/** The respond error of a call the mode refuses outright, or undefined. */
export function modeRefusal(mode: Mode, tool: Tool): string | undefined {
  if (tool.name === EXIT_PLAN_MODE && mode !== "plan") {
    return `Plan mode is not on (this session is in ${MODE_LABELS[mode]} mode), so there is no plan to leave. Go on with the task.`;
  }
  if (mode === "plan" && !planAllows(tool)) {
    return (
      `Plan mode is on: ${tool.name} can change files or run things, so it was not run. ` +
      "In plan mode only read-only tools run: read and search the workspace, then call exit_plan_mode with your plan; " +
      "the person decides whether to implement it."
    );
  }
  return undefined;
}

const suggestEdit = (view: CallView) =>
  view.tool.source === "builtin" &&
  view.tool.capabilities.includes("WritesFiles") &&
  view.tool.approvalFor(view.input) === "suggest";

/**
 * The decision in this mode. Only the tool's own ask (decision "ask") is ever waived: an org deny
 * or ask rule stands, and a person's question (Interactive tools, exit_plan_mode) is never
 * answered for them. exit_plan_mode is never covered by an approval "for the session".
 */
export function applyMode(mode: Mode, d: Decision, view: CallView): Decision {
  const interactive = view.tool.capabilities.includes("Interactive") || view.tool.name === EXIT_PLAN_MODE;
  if (interactive && d.action === "run" && d.decision === "approved_session") {
    return { action: "ask", decision: "ask", reason: "The person answers this every time." };
  }
  if (view.tool.name === EXIT_PLAN_MODE && d.action === "ask" && d.decision === "ask") {
    return { ...d, reason: "The agent's plan. Accept it to leave plan mode and implement it, or keep planning." };
  }
  if (d.action !== "ask" || d.decision !== "ask" || interactive) return d;
  if (mode === "auto")
    return {
      action: "run",
      decision: "auto",
      reason: "Auto mode: runs without a card (the org policy allows it).",
      mode,
    };
  if (mode === "accept-edits" && suggestEdit(view)) {
    return {
      action: "run",
      decision: "auto",
      reason: "Accept-edits mode: a file edit inside the workspace runs without a card.",
      mode,
    };
  }
  return d;
}
