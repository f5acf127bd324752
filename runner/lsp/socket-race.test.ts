// The language server starts again when a covered host socket vanished as its sandbox started,
// and answers the diagnostics asked meanwhile instead of failing them with bwrap's exit.
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from "vitest";
import { sandboxInfo } from "../exec/sandbox";
import { helperSandbox } from "../exec/helper-sandbox";
import { tempWorkspace } from "../testing/exec";
import { loseSocketRace } from "../testing/socket-race";
import { TypeScriptServer } from "./server";

vi.setConfig({ testTimeout: 120_000 });

describe.runIf(sandboxInfo("auto").available)("the language server's sandbox losing a socket race", () => {
  let ws: Awaited<ReturnType<typeof tempWorkspace>>;
  beforeAll(async () => {
    ws = await tempWorkspace();
  });
  afterAll(() => ws.cleanup());

  it("starts once more and answers", async () => {
    const race = await loseSocketRace();
    const helpers = helperSandbox(race.sandbox, { workspace: ws.dir, hide: [] });
    ws.workspace.helpers.useSandbox(helpers.wrap);
    const logs: string[] = [];
    const server = new TypeScriptServer(ws.dir, ws.workspace.helpers, { log: (l) => logs.push(l) });
    onTestFinished(async () => {
      await server.dispose();
      await helpers.dispose();
      await race.dispose();
    });
    const found = await server.diagnostics("a.ts", "export const n: number = 'x';\n");
    expect(found).toEqual([expect.objectContaining({ line: 1, column: 14, code: 2322, severity: "error" })]);
    expect(server.starts).toBe(2);
    expect(logs.join("\n")).toMatch(/bwrap: Can't (mkdir parents for|create file at) \/var\/tmp\/quiver-vanish-/);
  });
});
