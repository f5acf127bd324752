// An edit's tool card gets the file's real diff: through the real pipeline, a real database and a
// real runner on a temp dir, tool.finished carries the unified diff the runner applied, whether
// the call asked first or ran on a policy allow, bounded for a huge write, and never in the
// model's text.
import { readFile, writeFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testDatabases, useTestDb } from "../testing/db";
import type { SessionEventBody } from "../protocol/events";
import { runnerHarness } from "../testing/runner";
import { createExecutorRouter } from "../executors/router";
import { editFileTool } from "../tools/builtin/edit_file";
import { readFileTool } from "../tools/builtin/read_file";
import { writeFileTool } from "../tools/builtin/write_file";
import { call, type Harness, newTurn, request, usePipelines, waitFor } from "../testing/pipeline";

type Finished = Extract<SessionEventBody, { type: "tool.finished" }>;
type Required = Extract<SessionEventBody, { type: "approval.required" }>;

let runner: Awaited<ReturnType<typeof runnerHarness>>;
beforeAll(async () => {
  runner = await runnerHarness();
});
afterAll(async () => runner?.close());

const lines = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}`).join("\n") + "\n";

describe.each(testDatabases())("an edit's applied diff on %s", (provider) => {
  const t = useTestDb(provider);
  const setup = usePipelines(t);
  const pipeline = () =>
    setup({
      tools: [readFileTool, editFileTool, writeFileTool],
      deps: { executors: createExecutorRouter({ runner: runner.server.pool }) },
    });
  const finished = (h: Harness, sessionId: string) =>
    h.events
      .filter((e) => e.sessionId === sessionId && e.event.type === "tool.finished")
      .map((e) => e.event as Finished);

  it("an approved edit and an edit run on a policy allow both finish with the file's real hunk", async () => {
    const h = pipeline();
    const s = await newTurn(t.current);
    const file = `${provider}-a.ts`;
    await writeFile(`${runner.dir}/${file}`, lines(40));
    await h.pipeline.dispatch(request(h, s, [call("read_file", { path: file })]));

    const asked = h.pipeline.dispatch(
      request(h, s, [call("edit_file", { path: file, old_string: "line 21\n", new_string: "LINE 21\n" })]),
    );
    const card = await waitFor(
      () =>
        h.events.find((e) => e.event.type === "approval.required" && e.sessionId === s.session.id)?.event as
          Required | undefined,
      "approval card",
    );
    expect(card.request.diff).toContain("@@ -18,7 +18,7 @@");
    await h.pipeline.answerApproval(s.actor, card.approvalId, "once");
    const out = await asked;
    expect(out.results[0]).toMatchObject({ isError: false });
    expect(out.results[0].content).not.toContain("@@");
    const approved = finished(h, s.session.id).at(-1)!;
    expect(approved.diff).toBe(card.request.diff);
    expect(approved.diff).toBe(
      [
        `--- a/${file}`,
        `+++ b/${file}`,
        "@@ -18,7 +18,7 @@",
        " line 18",
        " line 19",
        " line 20",
        "-line 21",
        "+LINE 21",
        " line 22",
        " line 23",
        " line 24",
        "",
      ].join("\n"),
    );

    await t.current.db.orgPolicy.create({
      data: {
        orgId: s.org.id,
        version: 1,
        rules: [
          { effect: "allow", tool: "edit_file" },
          { effect: "allow", tool: "write_file" },
        ],
      },
    });
    await h.pipeline.dispatch(
      request(h, s, [call("edit_file", { path: file, old_string: "line 33\n", new_string: "line 33\nline 33b\n" })]),
    );
    expect(h.events.filter((e) => e.event.type === "approval.required" && e.sessionId === s.session.id)).toHaveLength(
      1,
    );
    expect(finished(h, s.session.id).at(-1)!.diff).toContain(
      "@@ -31,6 +31,7 @@\n line 31\n line 32\n line 33\n+line 33b\n line 34\n line 35\n line 36\n",
    );
    expect(await readFile(`${runner.dir}/${file}`, "utf8")).toContain("line 33\nline 33b\n");

    // A huge write: the event carries a bounded diff that says it was cut.
    const big = Array.from({ length: 3_000 }, (_, i) => `row ${i} ${"y".repeat(60)}`).join("\n");
    await h.pipeline.dispatch(request(h, s, [call("write_file", { path: `${provider}-big.txt`, content: big })]));
    const huge = finished(h, s.session.id).at(-1)!;
    expect(huge.status).toBe("succeeded");
    expect(huge.diff!.length).toBeLessThan(21_000);
    expect(huge.diff).toMatch(/^--- \/dev\/null\n\+\+\+ b\/.*-big\.txt\n@@ -0,0 \+1,3000 @@\n/);
    expect(huge.diff).toMatch(/\n… diff cut: \d+ more lines \(\d+ characters\) not shown\n$/);
  });

  it("a refused edit finishes with no diff", async () => {
    const h = pipeline();
    const s = await newTurn(t.current);
    await t.current.db.orgPolicy.create({
      data: { orgId: s.org.id, version: 1, rules: [{ effect: "allow", tool: "edit_file" }] },
    });
    await writeFile(`${runner.dir}/${provider}-unread.ts`, "x\n");
    const out = await h.pipeline.dispatch(
      request(h, s, [call("edit_file", { path: `${provider}-unread.ts`, old_string: "x", new_string: "y" })]),
    );
    expect(out.results[0].isError).toBe(true);
    expect(finished(h, s.session.id).at(-1)).not.toHaveProperty("diff");
  });
});
