// exit_plan_mode: its shape (always asked, never for the session, refused outside plan mode). The
// whole flow through a real server on both wire formats (plan → card → "Keep planning" → card →
// "Accept and implement" → the same turn edits without a card) is in services/session-modes.test.ts.
import { describe, expect, it } from "vitest";
import { applyMode, modeRefusal } from "../../policy/modes";
import { exitPlanModeTool } from "./exit_plan_mode";

describe("exit_plan_mode's rules", () => {
  const view = { tool: exitPlanModeTool, input: { plan: "# Fix it\n- change a.ts" } };
  it("is asked in every mode, never covered for the session, and refused outside plan mode", () => {
    expect(exitPlanModeTool.approvalFor(view.input)).toBe("required");
    expect(exitPlanModeTool.summarize(view.input)).toBe("Plan: Fix it");
    for (const mode of ["plan", "auto", "accept-edits"] as const) {
      expect(applyMode(mode, { action: "ask", decision: "ask", reason: "x" }, view).action).toBe("ask");
    }
    expect(applyMode("plan", { action: "run", decision: "approved_session", reason: "x" }, view).action).toBe("ask");
    expect(modeRefusal("plan", exitPlanModeTool)).toBeUndefined();
    expect(modeRefusal("auto", exitPlanModeTool)).toMatch(/Plan mode is not on \(this session is in Auto mode\)/);
  });
});
