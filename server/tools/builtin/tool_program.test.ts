// tool_program on a real runner: the schema's bounds (steps, operations, repeat), repeat over a
// search's matches with its cap, if_contains, a step failing mid-way, and, through the real
// pipeline and database, a program's read crediting a later edit_file and each step's own cut
// with its full output stored.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { runnerHarness } from "../../testing/runner";
import { createExecutorRouter } from "../../executors/router";
import { call, newTurn, request, usePipelines } from "../../testing/pipeline";
import { testDatabases, useTestDb } from "../../testing/db";
import { editFileTool } from "./edit_file";
import { readFileTool } from "./read_file";
import { retrieveToolResultTool } from "./retrieve_tool_result";
import { toolProgramTool } from "./tool_program";

let h: Awaited<ReturnType<typeof runnerHarness>>;
beforeAll(async () => {
  h = await runnerHarness();
  await mkdir(`${h.dir}/src`, { recursive: true });
  for (const name of ["a", "b", "c", "d"])
    await writeFile(
      `${h.dir}/src/${name}.ts`,
      `import { parseConfig } from "./config";\nexport const ${name} = parseConfig("${name}");\n`,
    );
  await writeFile(`${h.dir}/src/config.ts`, "export function parseConfig(s: string) {\n  return s.trim();\n}\n");
}, 60_000);
afterAll(async () => h?.close());

const step = (op: string, args: Record<string, unknown> = {}) => ({ op, ...args });

describe("tool_program schema", () => {
  it("bounds the step count, the operations and repeat in the schema the model is sent", () => {
    const schema = toolProgramTool.jsonSchema as {
      properties: {
        steps: {
          maxItems: number;
          items: { properties: Record<string, { enum?: string[]; properties?: Record<string, { maximum?: number }> }> };
        };
      };
    };
    expect(schema.properties.steps.maxItems).toBe(8);
    expect(schema.properties.steps.items.properties.op.enum).toEqual([
      "read_file",
      "search_text",
      "list_files",
      "glob",
      "git_diff",
    ]);
    expect(schema.properties.steps.items.properties.repeat.properties!.max.maximum).toBe(10);
  });

  it("refuses 9 steps, an op that is not read-only, and a repeat past its cap, saying why", async () => {
    const nine = await h.call(toolProgramTool, {
      steps: Array.from({ length: 9 }, () => step("glob", { pattern: "*.ts" })),
    });
    expect(nine.error).toMatch(/at most 8 steps; split the work into two tool_program calls/);
    for (const op of ["edit_file", "write_file", "apply_patch", "shell", "run_check", "mcp__github__create_issue"]) {
      const r = await h.call(toolProgramTool, { steps: [step(op, { path: "src/a.ts" })] });
      expect(r.error, op).toMatch(/read_file.*search_text.*list_files.*glob.*git_diff/s);
    }
    const tooMany = await h.call(toolProgramTool, {
      steps: [step("glob", { pattern: "*.ts" }), step("read_file", { repeat: { over: 1, max: 11 } })],
    });
    expect(tooMany.error).toMatch(/max/);
  });

  it("refuses a program whose steps are wrong before running any of them", async () => {
    const r = await h.call(toolProgramTool, {
      steps: [
        step("read_file", { path: "src/a.ts" }),
        step("read_file", { repeat: { over: 1 } }),
        step("search_text", {}),
        step("glob", { pattern: "*", if_contains: { step: 4, text: "x" } }),
      ],
    });
    expect(r.error).toMatch(/^The program was not run:/);
    expect(r.error).toContain("step 2: repeat.over names step 1 (read_file), which matches no paths");
    expect(r.error).toMatch(/step 3 \(search_text\): .*pattern: missing required field/s);
    expect(r.error).toContain("step 4: if_contains.step is 4, but it must name an earlier step (1 to 3)");
  });
});

describe("tool_program", () => {
  it("repeats a read over a search's matched files, up to repeat.max, naming the rest", async () => {
    const r = await h.call(toolProgramTool, {
      steps: [
        step("search_text", { pattern: "parseConfig(", glob: "src/[a-d].ts" }),
        step("read_file", { repeat: { over: 1, max: 2 } }),
      ],
    });
    expect(r.error).toBeUndefined();
    expect(r.isError).toBe(false);
    expect(r.output).toMatch(/^Program ran 2 of 2 steps\./);
    expect(r.output).toContain(
      "### step 2 · read_file repeated over step 1: 2 of 4 paths; not run for: src/c.ts, src/d.ts (repeat.max is 2)",
    );
    expect(r.output).toContain(
      '### step 2.1 · read_file {"path":"src/a.ts"}\n     1\timport { parseConfig } from "./config";',
    );
    expect(r.output).toContain('### step 2.2 · read_file {"path":"src/b.ts"}');
    expect(r.output).not.toContain('read_file {"path":"src/c.ts"}');
  });

  it("runs an if_contains step only when the earlier output has the text", async () => {
    const r = await h.call(toolProgramTool, {
      steps: [
        step("read_file", { path: "src/config.ts" }),
        step("glob", { pattern: "src/*.ts", if_contains: { step: 1, text: "trim()" } }),
        step("list_files", { path: "src", if_contains: { step: 1, text: "toUpperCase" } }),
        step("read_file", { path: "src/a.ts", if_contains: { step: 3, text: "a.ts" } }),
      ],
    });
    expect(r.output).toMatch(/^Program ran 2 of 4 steps \(the others were skipped\)\./);
    expect(r.output).toContain('### step 2 · glob {"pattern":"src/*.ts"}\nsrc/a.ts');
    expect(r.output).toContain('### step 3 · list_files — skipped: step 1\'s output does not contain "toUpperCase"');
    expect(r.output).toContain("### step 4 · read_file — skipped: step 3 did not run");
    expect(r.meta?.steps).toEqual([
      { step: 1, op: "read_file", status: "ok" },
      { step: 2, op: "glob", status: "ok" },
      { step: 3, op: "list_files", status: "skipped" },
      { step: 4, op: "read_file", status: "skipped" },
    ]);
  });

  it("stops at a failing step: earlier results kept, the failure named, later steps not run", async () => {
    const r = await h.call(toolProgramTool, {
      steps: [
        step("read_file", { path: "src/a.ts" }),
        step("read_file", { path: "src/missing.ts" }),
        step("glob", { pattern: "*.ts" }),
        step("git_diff"),
      ],
    });
    expect(r.isError).toBe(true);
    expect(r.output.split("\n")[0]).toBe(
      "Program stopped at step 2 (read_file): src/missing.ts does not exist. Steps before it kept their results; later steps were not run.",
    );
    expect(r.output).toContain('### step 1 · read_file {"path":"src/a.ts"}\n     1\timport');
    expect(r.output).toContain(
      '### step 2 · read_file {"path":"src/missing.ts"} — FAILED\nsrc/missing.ts does not exist',
    );
    expect(r.output).toContain("### step 3 · glob — not run (step 2 failed)");
    expect(r.output).toContain("### step 4 · git_diff — not run (step 2 failed)");
    expect(r.meta).toMatchObject({
      failedStep: 2,
      steps: [{ status: "ok" }, { status: "failed" }, { status: "not_run" }, { status: "not_run" }],
    });
  });
});

describe.each(testDatabases())("tool_program through the pipeline on %s", (provider) => {
  const t = useTestDb(provider);
  const setup = usePipelines(t);
  const pipeline = () =>
    setup({
      tools: [toolProgramTool, readFileTool, editFileTool, retrieveToolResultTool],
      deps: { executors: createExecutorRouter({ runner: h.server.pool }), limits: { approvalPollMs: 100 } },
    });
  async function turn() {
    const s = await newTurn(t.current);
    await t.current.db.orgPolicy.create({
      data: { orgId: s.org.id, version: 1, rules: [{ effect: "allow", tool: "edit_file" }] },
    });
    return s;
  }

  it("a file read completely by a program may be edited afterwards; one it did not read may not", async () => {
    const p = pipeline();
    const s = await turn();
    await writeFile(`${h.dir}/${provider}-x.ts`, "export const x = 1;\n");
    await writeFile(`${h.dir}/${provider}-y.ts`, "export const y = 1;\n");
    const prog = await p.pipeline.dispatch(
      request(p, s, [
        call("tool_program", {
          steps: [step("glob", { pattern: `${provider}-x.ts` }), step("read_file", { repeat: { over: 1 } })],
        }),
      ]),
    );
    expect(prog.results[0].isError).toBe(false);
    const edits = await p.pipeline.dispatch(
      request(p, s, [
        call("edit_file", { path: `${provider}-x.ts`, old_string: "= 1", new_string: "= 2" }),
        call("edit_file", { path: `${provider}-y.ts`, old_string: "= 1", new_string: "= 2" }),
      ]),
    );
    expect(edits.results[0].isError).toBe(false);
    expect(await readFile(`${h.dir}/${provider}-x.ts`, "utf8")).toBe("export const x = 2;\n");
    expect(edits.results[1].content).toMatch(/has not been read in this session; read it with read_file first/);
  }, 60_000);

  it("cuts each step's long output on its own, storing its full text for retrieve_tool_result", async () => {
    const p = pipeline();
    const s = await turn();
    const big =
      Array.from({ length: 1500 }, (_, i) => `line ${String(i + 1).padStart(4, "0")} ${"x".repeat(40)}`).join("\n") +
      "\n";
    await writeFile(`${h.dir}/${provider}-big.txt`, big);
    const r = (
      await p.pipeline.dispatch(
        request(p, s, [
          call("tool_program", {
            steps: [step("read_file", { path: `${provider}-big.txt` }), step("read_file", { path: "src/a.ts" })],
          }),
        ]),
      )
    ).results[0];
    expect(r.isError).toBe(false);
    const ref = /"ref":"(sp_[0-9a-f]{32})"/.exec(r.content)?.[1];
    expect(ref).toBeDefined();
    // Step 1 is cut (head and tail kept, the middle named); step 2, after it, is whole.
    expect(r.content).toContain("     1\tline 0001");
    expect(r.content).toContain("  1500\tline 1500");
    expect(r.content).not.toContain("line 0700");
    expect(r.content).toMatch(/bytes omitted/);
    expect(r.content).toContain('### step 2 · read_file {"path":"src/a.ts"}\n     1\timport { parseConfig }');
    expect(Buffer.byteLength(r.content)).toBeLessThan(40_000);
    const middle = (
      await p.pipeline.dispatch(request(p, s, [call("retrieve_tool_result", { ref, pattern: "line 0700 " })]))
    ).results[0];
    expect(middle.content).toContain("   700\tline 0700");
  }, 60_000);
});
