import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createExecutorRouter } from "./router";
import type { ExecRequest, ExecResult, Executor } from "./contract";
import { defineTool } from "../tools/tool";

// Test doubles: executors that only say whether they are attached.
function fake(kind: "runner" | "browser", attached: () => boolean): Executor {
  return {
    kind,
    available: attached,
    run: async (_r: ExecRequest): Promise<ExecResult> => ({ ok: true, output: kind }),
  };
}

const browserRead = defineTool({
  name: "list_files",
  description: "Lists.",
  input: z.object({ write: z.boolean().optional() }),
  capabilities: ["ReadsFiles"],
  executor: "browser",
  isReadOnly: (i) => !i.write,
  async execute() {
    return { output: "" };
  },
});
const runnerTool = defineTool({
  name: "shell",
  description: "Runs.",
  input: z.object({}),
  capabilities: ["ExecutesCode"],
  executor: "runner",
  async execute() {
    return { output: "" };
  },
});
const serverTool = defineTool({
  name: "tool_search",
  description: "Finds.",
  input: z.object({}),
  capabilities: [],
  executor: "server",
  async execute() {
    return { output: "" };
  },
});

describe("executor router", () => {
  it("sends browser-kind read-only calls to an attached, in-sync page, everything else to the runner", () => {
    let attached = true;
    let inSync = true;
    const runner = fake("runner", () => true);
    const browser = { ...fake("browser", () => attached), inSync: () => inSync };
    const router = createExecutorRouter({ runner, browser });
    expect(router.pick(browserRead, {}, "s")?.kind).toBe("browser");
    expect(router.pick(browserRead, { write: true }, "s")?.kind).toBe("runner");
    expect(router.pick(runnerTool, {}, "s")?.kind).toBe("runner");
    expect(router.pick(serverTool, {}, "s")).toBeUndefined();
    inSync = false;
    expect(router.pick(browserRead, {}, "s")?.kind).toBe("runner");
    inSync = true;
    attached = false;
    expect(router.pick(browserRead, {}, "s")?.kind).toBe("runner");
    expect(createExecutorRouter({ runner }).pick(browserRead, {}, "s")?.kind).toBe("runner");
  });
});
