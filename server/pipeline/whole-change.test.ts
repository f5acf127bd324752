// A change longer than its approval card shows: the card carries the first 20,000 characters
// and a reference to the whole of it, which pages back byte for byte through the spills the IDE
// reads, the runner's preview of an edit included (it used to be cut at the runner). Without
// room to keep it, the card says so. Real pipeline, real database, real runner on a temp dir.
import { writeFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTwoFilesPatch } from "diff";
import { testDatabases, useTestDb } from "../testing/db";
import type { SessionEventBody } from "../protocol/events";
import { runnerHarness } from "../testing/runner";
import { createExecutorRouter } from "../executors/router";
import { createSpillStore } from "../services/spills";
import { editFileTool } from "../tools/builtin/edit_file";
import { readFileTool } from "../tools/builtin/read_file";
import { writeFileTool } from "../tools/builtin/write_file";
import { call, type Harness, newTurn, request, usePipelines, waitFor } from "../testing/pipeline";

type Required = Extract<SessionEventBody, { type: "approval.required" }>;

let runner: Awaited<ReturnType<typeof runnerHarness>>;
beforeAll(async () => {
  runner = await runnerHarness();
});
afterAll(async () => runner?.close());

const rows = (n: number, tag: string) =>
  Array.from({ length: n }, (_, i) => `${tag} ${i} ${"y".repeat(60)}`).join("\n");

describe.each(testDatabases())("the whole of a long change on %s", (provider) => {
  const t = useTestDb(provider);
  const setup = usePipelines(t);
  const tools = [readFileTool, editFileTool, writeFileTool];
  const executors = () => createExecutorRouter({ runner: runner.server.pool });

  /** Dispatches `c`, waits for its card, rejects it (nothing is written) and returns the card. */
  async function cardOf(h: Harness, s: Awaited<ReturnType<typeof newTurn>>, c: ReturnType<typeof call>) {
    const asked = h.pipeline.dispatch(request(h, s, [c]));
    const card = await waitFor(
      () =>
        h.events.findLast((e) => e.event.type === "approval.required" && e.sessionId === s.session.id)?.event as
          Required | undefined,
      "approval card",
    );
    await h.pipeline.answerApproval(s.actor, card.approvalId, "reject");
    await asked;
    return card.request;
  }

  const whole = async (h: Harness, sessionId: string, ref: string) => {
    const page = await h.spills.read(ref, { sessionId, offset: 0, length: 16 * 1024 * 1024 });
    expect(page!.end).toBe(page!.totalBytes);
    return page!.text;
  };

  it("a long write's card is clipped and its whole diff is kept for the card", async () => {
    const h = setup({ tools, deps: { executors: executors() } });
    const s = await newTurn(t.current);
    const content = `${rows(3_000, "row")}\nTHE LAST LINE\n`;
    const card = await cardOf(h, s, call("write_file", { path: `${provider}-new.txt`, content }));
    expect(card.diff!.length).toBeLessThan(21_000);
    expect(card.diff).not.toContain("THE LAST LINE");
    const text = await whole(h, s.session.id, card.diffRef!);
    expect(text).toContain("+THE LAST LINE\n");
    expect(text.startsWith(card.diff!.split("\n").slice(0, 5).join("\n"))).toBe(true);
    expect(text.split("\n").filter((l) => l.startsWith("+row ")).length).toBe(3_000);
  });

  it("an edit's card keeps the runner's whole preview, with the file's real line numbers", async () => {
    const h = setup({ tools, deps: { executors: executors() } });
    const s = await newTurn(t.current);
    const file = `${provider}-edit.txt`;
    const before = `${rows(10, "old")}\n`;
    await writeFile(`${runner.dir}/${file}`, before);
    await h.pipeline.dispatch(request(h, s, [call("read_file", { path: file })]));
    const added = `${rows(2_000, "new")}\nHIDDEN AT THE END\n`;
    const card = await cardOf(
      h,
      s,
      call("edit_file", { path: file, old_string: "old 9 ", new_string: `${added}old 9 ` }),
    );
    const after = before.replace("old 9 ", `${added}old 9 `);
    const expected = createTwoFilesPatch(`a/${file}`, `b/${file}`, before, after, undefined, undefined, {
      context: 3,
    }).replace(/^=+\n/, "");
    expect(card.diff).toContain("@@ -7,4 +7,");
    expect(await whole(h, s.session.id, card.diffRef!)).toBe(expected);
  });

  it("a short change has no reference and stores nothing", async () => {
    const h = setup({ tools, deps: { executors: executors() } });
    const s = await newTurn(t.current);
    const card = await cardOf(h, s, call("write_file", { path: `${provider}-small.txt`, content: "hello\n" }));
    expect(card.diff).toContain("+hello");
    expect(card.diffRef).toBeUndefined();
    expect(await t.current.db.spill.count({ where: { sessionId: s.session.id } })).toBe(0);
  });

  it("without room to keep it, the card says only part of the change can be shown", async () => {
    const spills = createSpillStore(t.current.db, t.current.url, {
      sessionBytes: 64 * 1024,
      dataDir: runner.dir,
      minFreeMb: 0,
    });
    try {
      const h = setup({ tools, deps: { executors: executors(), spills } });
      const s = await newTurn(t.current);
      const card = await cardOf(h, s, call("write_file", { path: `${provider}-huge.txt`, content: rows(3_000, "r") }));
      expect(card.diffRef).toBeUndefined();
      expect(card.diff!.length).toBeLessThan(21_000);
      expect(card.note).toMatch(
        /Only the first 20,000 characters of this change are shown .*stored outputs are at their limit/,
      );
    } finally {
      await spills.close();
    }
  });
});
