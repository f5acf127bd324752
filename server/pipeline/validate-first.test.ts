// Validate before asking (issue 23, item 11): a call that will be refused never shows a card.
// Through the real pipeline and a real runner: a write through a symlink that leaves the
// workspace, an edit of a missing file, a write into a missing folder's symlinked parent.
import { mkdir, mkdtemp, readdir, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testDatabases, useTestDb } from "../testing/db";
import { runnerHarness } from "../testing/runner";
import { createExecutorRouter } from "../executors/router";
import { editFileTool } from "../tools/builtin/edit_file";
import { writeFileTool } from "../tools/builtin/write_file";
import { applyPatchTool } from "../tools/builtin/apply_patch";
import { call, newTurn, request, usePipelines } from "../testing/pipeline";

let runner: Awaited<ReturnType<typeof runnerHarness>>;
let outside: string;
beforeAll(async () => {
  runner = await runnerHarness();
  outside = await mkdtemp(join(tmpdir(), "quiver-outside-"));
  await symlink(outside, join(runner.dir, "escape"));
  await mkdir(join(runner.dir, "sub"));
  await symlink(outside, join(runner.dir, "sub", "deeper"));
}, 60_000);
afterAll(async () => runner?.close());

describe.each(testDatabases())("validation before the card on %s", (provider) => {
  const t = useTestDb(provider);
  const setup = usePipelines(t);
  const pipeline = () =>
    setup({
      tools: [writeFileTool, editFileTool, applyPatchTool],
      deps: { executors: createExecutorRouter({ runner: runner.server.pool }) },
    });

  it.each([
    ["write_file escape/x", "write_file", { path: "escape/x", content: "stolen" }],
    ["write_file sub/deeper/new/x", "write_file", { path: "sub/deeper/new/x", content: "stolen" }],
    ["write_file /etc/passwd-like absolute", "write_file", { path: `${"/tmp"}/quiver-absolute-x`, content: "x" }],
    ["edit_file of a file that does not exist", "edit_file", { path: "missing.ts", old_string: "a", new_string: "b" }],
    [
      "apply_patch through the symlink",
      "apply_patch",
      { patch: "*** Begin Patch\n*** Add File: escape/y\n+stolen\n*** End Patch" },
    ],
  ])("%s: no approval card, a respond error to the model", async (_label, tool, input) => {
    const h = pipeline();
    const s = await newTurn(t.current);
    const out = await h.pipeline.dispatch(request(h, s, [call(tool, input)]));
    expect(h.events.filter((e) => e.event.type === "approval.required")).toEqual([]);
    expect(out.results[0].isError).toBe(true);
    expect(out.results[0].content.length).toBeGreaterThan(0);
    expect(await readdir(outside)).toEqual([]);
    const row = await t.current.db.toolCall.findFirst({ where: { turnId: s.turn.id } });
    expect(row?.status).toBe("failed");
  });
});
