// run_check and tool_transaction through the real pipeline, a real database and a real runner on
// a temp dir: a transaction is asked about once, its card showing every edit as a diff and its
// checks by name, and runs only once approved; an org policy that allows run_check while it asks
// for shell runs the check unasked and still asks for the shell command.
import { readFile, writeFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { testDatabases, useTestDb } from "../testing/db";
import { runnerHarness } from "../testing/runner";
import { createExecutorRouter } from "../executors/router";
import { readFileTool } from "../tools/builtin/read_file";
import { runCheckTool } from "../tools/builtin/run_check";
import { shellTool } from "../tools/builtin/shell";
import { toolTransactionTool } from "../tools/builtin/tool_transaction";
import { approvalCards, call, newTurn, request, usePipelines, waitFor } from "../testing/pipeline";

vi.setConfig({ testTimeout: 60_000, hookTimeout: 180_000 });

let runner: Awaited<ReturnType<typeof runnerHarness>>;
beforeAll(async () => {
  runner = await runnerHarness({ connectMs: 120_000 });
  await writeFile(
    `${runner.dir}/quiver.checks.json`,
    JSON.stringify({ test: { argv: ["true"] }, lint: { argv: ["true"] } }),
  );
});
afterAll(async () => runner?.close());

describe.each(testDatabases())("checks through the pipeline on %s", (provider) => {
  const t = useTestDb(provider);
  const setup = usePipelines(t);
  const pipeline = () =>
    setup({
      tools: [readFileTool, runCheckTool, shellTool, toolTransactionTool],
      deps: { executors: createExecutorRouter({ runner: runner.server.pool }) },
    });

  it("asks once for a whole transaction, showing every edit as a diff and every check by name", async () => {
    const h = pipeline();
    const s = await newTurn(t.current);
    const a = `${provider}-a.txt`;
    const b = `${provider}-b.txt`;
    await writeFile(`${runner.dir}/${a}`, "a1\na2\n");
    await writeFile(`${runner.dir}/${b}`, "b1\n");
    // a was read before (its card diff is the runner's, from the real file); b is read inside the transaction.
    await h.pipeline.dispatch(request(h, s, [call("read_file", { path: a })]));
    const steps = [
      { op: "read_file", path: b },
      { op: "edit_file", path: a, old_string: "a2", new_string: "A2" },
      { op: "edit_file", path: b, old_string: "b1", new_string: "B1" },
      { op: "run_check", name: "test" },
      { op: "run_check", name: "lint" },
    ];
    const done = h.pipeline.dispatch(request(h, s, [call("tool_transaction", { steps })]));
    const card = await waitFor(() => approvalCards(h, s.session.id)[0], "approval card");
    expect(card.request.summary).toBe(`Transaction: edit ${a}, ${b}; then run checks test, lint`);
    expect(card.request.diff).toContain(`+++ b/${a}`);
    expect(card.request.diff).toContain("@@ -1,2 +1,2 @@\n a1\n-a2\n+A2");
    expect(card.request.diff).toContain(`+++ b/${b}`);
    expect(card.request.diff).toContain("-b1\n+B1");
    expect(await readFile(`${runner.dir}/${a}`, "utf8")).toBe("a1\na2\n");
    await h.pipeline.answerApproval(s.actor, card.approvalId, "once");
    const out = await done;
    expect(out.results[0]).toMatchObject({ isError: false });
    expect(out.results[0].content).toMatch(/^Transaction applied: 2 edit steps, then 2 checks passed/);
    expect(approvalCards(h, s.session.id)).toHaveLength(1);
    expect(await readFile(`${runner.dir}/${a}`, "utf8")).toBe("a1\nA2\n");
    expect(await readFile(`${runner.dir}/${b}`, "utf8")).toBe("B1\n");
  });

  it("an org policy allows run_check while it asks for shell", async () => {
    const h = pipeline();
    const s = await newTurn(t.current);
    await t.current.db.orgPolicy.create({
      data: {
        orgId: s.org.id,
        version: 1,
        rules: [
          { effect: "ask", tool: "shell" },
          { effect: "allow", tool: "run_check" },
        ],
      },
    });
    const check = await h.pipeline.dispatch(request(h, s, [call("run_check", { name: "test" })]));
    expect(check.results[0]).toMatchObject({ isError: false });
    expect(check.results[0].content).toMatch(/^Check test \(true\): Exit code: 0/);
    expect(approvalCards(h, s.session.id)).toHaveLength(0);
    expect(
      await t.current.db.toolCall.findFirst({ where: { sessionId: s.session.id, name: "run_check" } }),
    ).toMatchObject({ decision: "policy_allow" });
    const shell = h.pipeline.dispatch(request(h, s, [call("shell", { command: "true" })]));
    const card = await waitFor(() => approvalCards(h, s.session.id)[0], "shell's approval card");
    expect(card.request).toMatchObject({ tool: "shell", command: "true" });
    await h.pipeline.answerApproval(s.actor, card.approvalId, "reject");
    expect((await shell).results[0].content).toMatch(/rejected/);
  });
});
