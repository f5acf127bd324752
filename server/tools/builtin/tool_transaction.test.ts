// tool_transaction on a real runner over a temp workspace: a failing check rolls every file back
// byte-exact (an edited file with its mode, a created file and its folders removed, a deleted file
// restored), an edit step that fails mid-way rolls back the steps before it, a passing
// transaction holds, unknown check names and a 13th step are refused before anything runs, and
// the approval card's preview shows every edit as a diff and every check by name.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { existsSync } from "node:fs";
import { chmod, readFile, stat, writeFile } from "node:fs/promises";
import { runnerHarness } from "../../testing/runner";
import { editFileTool } from "./edit_file";
import { toolTransactionTool } from "./tool_transaction";

vi.setConfig({ testTimeout: 60_000, hookTimeout: 180_000 });

let h: Awaited<ReturnType<typeof runnerHarness>>;
beforeAll(async () => {
  h = await runnerHarness({ connectMs: 120_000 });
  await writeFile(
    `${h.dir}/quiver.checks.json`,
    JSON.stringify({ pass: { argv: ["true"] }, fail: { argv: ["sh", "-c", "echo 2 tests failed; exit 1"] } }),
  );
});
afterAll(async () => h?.close());

async function snapshot(path: string) {
  const st = await stat(`${h.dir}/${path}`);
  return { bytes: (await readFile(`${h.dir}/${path}`)).toString("hex"), mode: st.mode & 0o7777 };
}

describe("tool_transaction", () => {
  it("rolls back every file byte-exact when a check fails: edited, created and deleted", async () => {
    await writeFile(`${h.dir}/keep.sh`, "#!/bin/sh\r\necho one\r\necho two\r\n");
    await chmod(`${h.dir}/keep.sh`, 0o751);
    await writeFile(`${h.dir}/gone.txt`, "delete me\n");
    await chmod(`${h.dir}/gone.txt`, 0o600);
    const before = { keep: await snapshot("keep.sh"), gone: await snapshot("gone.txt") };
    const r = await h.call(toolTransactionTool, {
      steps: [
        { op: "read_file", path: "keep.sh" },
        { op: "read_file", path: "gone.txt" },
        { op: "edit_file", path: "keep.sh", old_string: "echo two", new_string: "echo TWO" },
        { op: "apply_patch", patch: "--- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-delete me\n" },
        { op: "write_file", path: "made/deep/new.txt", content: "new\n" },
        { op: "run_check", name: "fail" },
      ],
    });
    expect(r.error).toMatch(/^Transaction rolled back: step 6 \(run_check fail\) failed: check fail exit code 1/);
    expect(r.error).toContain(
      "Every file is back as it was: made/deep/new.txt removed, gone.txt recreated, keep.sh restored.",
    );
    expect(r.error).toContain("2 tests failed");
    expect(await snapshot("keep.sh")).toEqual(before.keep);
    expect(await snapshot("gone.txt")).toEqual(before.gone);
    expect(existsSync(`${h.dir}/made`)).toBe(false);
    // The ledger is back too: the session knows keep.sh as it is now and may edit it without a new read.
    expect(
      (await h.call(editFileTool, { path: "keep.sh", old_string: "echo one", new_string: "echo ONE" })).error,
    ).toBeUndefined();
  });

  it("an edit step that fails mid-way puts back the edits before it and names the step", async () => {
    await writeFile(`${h.dir}/a.txt`, "alpha\n");
    await writeFile(`${h.dir}/b.txt`, "beta\n");
    const r = await h.call(toolTransactionTool, {
      steps: [
        { op: "read_file", path: "a.txt" },
        { op: "edit_file", path: "a.txt", old_string: "alpha", new_string: "ALPHA" },
        { op: "edit_file", path: "b.txt", old_string: "beta", new_string: "BETA" },
        { op: "run_check", name: "pass" },
      ],
    });
    expect(r.error).toMatch(
      /^Transaction rolled back: step 3 \(edit_file b\.txt\) failed: b\.txt has not been read in this session/,
    );
    expect(r.error).toContain("a.txt restored");
    expect(await readFile(`${h.dir}/a.txt`, "utf8")).toBe("alpha\n");
    expect(await readFile(`${h.dir}/b.txt`, "utf8")).toBe("beta\n");
  });

  it("applies edits whose checks pass; a read inside counts for the ledger and later edits see earlier ones", async () => {
    await writeFile(`${h.dir}/c.txt`, "one\ntwo\n");
    const r = await h.call(toolTransactionTool, {
      steps: [
        { op: "read_file", path: "c.txt" },
        { op: "edit_file", path: "c.txt", old_string: "one", new_string: "uno" },
        { op: "edit_file", path: "c.txt", old_string: "uno\ntwo", new_string: "uno\ndos" },
        { op: "run_check", name: "pass" },
      ],
    });
    expect(r.error).toBeUndefined();
    expect(r.output).toMatch(/^Transaction applied: 2 edit steps, then 1 check passed\./);
    expect(r.output).toContain("#4 run_check pass: passed (exit code 0)");
    expect(r.diff).toContain("-one");
    expect(await readFile(`${h.dir}/c.txt`, "utf8")).toBe("uno\ndos\n");
  });

  it("refuses an unknown check name with the list, and a 13th step, before anything runs", async () => {
    await writeFile(`${h.dir}/d.txt`, "d\n");
    const r = await h.call(toolTransactionTool, {
      steps: [
        { op: "read_file", path: "d.txt" },
        { op: "edit_file", path: "d.txt", old_string: "d", new_string: "D" },
        { op: "run_check", name: "tests" },
      ],
    });
    expect(r.error).toBe(
      'Step 3 (run_check): There is no check named "tests" in quiver.checks.json. The checks are: fail, pass.',
    );
    expect(await readFile(`${h.dir}/d.txt`, "utf8")).toBe("d\n");
    const parsed = toolTransactionTool.parse({
      steps: Array.from({ length: 13 }, () => ({ op: "read_file", path: "d.txt" })),
    });
    expect(parsed.ok).toBe(false);
    expect(toolTransactionTool.parse({ steps: [{ op: "shell", command: "rm -rf ." }] }).ok).toBe(false);
  });

  it("previews every edit as a diff of the real files and names the checks in its summary", async () => {
    await writeFile(`${h.dir}/e.txt`, "e1\ne2\n");
    const steps = [
      { op: "read_file", path: "e.txt" },
      { op: "edit_file", path: "e.txt", old_string: "e2", new_string: "E2" },
      { op: "edit_file", path: "e.txt", old_string: "e1", new_string: "E1" },
      { op: "write_file", path: "f.txt", content: "f\n" },
      { op: "run_check", name: "pass" },
      { op: "run_check", name: "fail" },
    ];
    await h.call(toolTransactionTool, { steps: [steps[0]] });
    const p = await h.preview(toolTransactionTool, { steps });
    const diff = p && "diff" in p ? p.diff : "";
    expect(diff).toContain("+++ b/e.txt");
    expect(diff).toContain("-e2\n+E2");
    expect(diff).toContain("-e1\n+E1");
    expect(diff).toContain("+++ b/f.txt");
    const parsed = toolTransactionTool.parse({ steps });
    expect(parsed.ok && toolTransactionTool.summarize(parsed.value)).toBe(
      "Transaction: edit e.txt, f.txt; then run checks pass, fail",
    );
    expect(parsed.ok && toolTransactionTool.approvalFor(parsed.value)).toBe("required");
    expect(await readFile(`${h.dir}/e.txt`, "utf8")).toBe("e1\ne2\n");
    expect(existsSync(`${h.dir}/f.txt`)).toBe(false);
  });
});
