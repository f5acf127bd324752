// run_check's per-session catalog entry over a real runner on a temp dir: the name enum comes
// from quiver.checks.json, the description lists each check's latest run, and — the prompt-cache
// measurement — the whole tool list keeps its bytes across a turn's requests even after a run,
// changes only in run_check's entry on the next turn, and is otherwise the registry's own bytes.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { rm, writeFile } from "node:fs/promises";
import { runnerHarness } from "../testing/runner";
import { builtinTools } from "./builtin";
import { runCheckTool } from "./builtin/run_check";
import { CheckCatalog, CheckRuns, checkRuns } from "./checks-catalog";
import { ToolRegistry } from "./registry";

vi.setConfig({ testTimeout: 60_000, hookTimeout: 180_000 });

let h: Awaited<ReturnType<typeof runnerHarness>>;
beforeAll(async () => {
  h = await runnerHarness({ connectMs: 120_000 });
});
afterAll(async () => h?.close());

// One registry, as the server has: its cached catalog hands out the same entry objects each request.
const registry = new ToolRegistry(builtinTools());
const entries = () => registry.catalog().entries.slice();

describe("run_check's catalog entry", () => {
  it("enumerates the declared checks and keeps the prefix's bytes within a turn", async () => {
    await writeFile(
      `${h.dir}/quiver.checks.json`,
      JSON.stringify({ test: { argv: ["true"] }, lint: { argv: ["sh", "-c", "exit 1"] } }),
    );
    const catalog = new CheckCatalog({ runner: h.server.pool, version: () => undefined });
    const base = entries();
    const first = await catalog.patch("s1", base, "turn-1");
    const entry = first.find((e) => e.name === "run_check")!;
    expect((entry.input_schema as { properties: { name: { enum: string[] } } }).properties.name.enum).toEqual([
      "lint",
      "test",
    ]);
    expect(entry.description).toContain("- lint: `sh -c exit 1` — not run yet in this session");
    // Every other entry is the registry's own object, untouched.
    expect(first.filter((e) => e.name !== "run_check")).toEqual(base.filter((e) => e.name !== "run_check"));

    expect((await h.call(runCheckTool, { name: "lint" }, "s1")).isError).toBe(true);
    const sameTurn = await catalog.patch("s1", entries(), "turn-1");
    expect(JSON.stringify(sameTurn)).toBe(JSON.stringify(first));

    const nextTurn = await catalog.patch("s1", entries(), "turn-2");
    const before = JSON.stringify(first);
    const after = JSON.stringify(nextTurn);
    expect(after).not.toBe(before);
    const changed = nextTurn.filter((e, i) => JSON.stringify(e) !== JSON.stringify(first[i])).map((e) => e.name);
    expect(changed).toEqual(["run_check"]);
    expect(nextTurn.find((e) => e.name === "run_check")!.description).toMatch(
      /- lint: `sh -c exit 1` — latest run \d\d:\d\d:\d\d UTC: failed \(exit 1, \d+\.\d s\)/,
    );
    // Another session's description is its own.
    expect((await catalog.patch("s2", entries(), "turn-9")).find((e) => e.name === "run_check")!.description).toContain(
      "lint: `sh -c exit 1` — not run yet",
    );
    expect(checkRuns.latest("s1").get("lint")?.outcome).toMatch(/^failed/);
  });

  it("without a checks file the tool stays, says so, and takes any name", async () => {
    await rm(`${h.dir}/quiver.checks.json`, { force: true });
    const catalog = new CheckCatalog({ runner: h.server.pool, version: () => undefined, runs: new CheckRuns() });
    const entry = (await catalog.patch("s3", entries(), "t")).find((e) => e.name === "run_check")!;
    expect(entry.description).toContain("This workspace declares no checks (no quiver.checks.json at its root)");
    expect(
      (entry.input_schema as { properties: { name: { enum?: string[]; type: string } } }).properties.name,
    ).toMatchObject({ type: "string" });
    expect((entry.input_schema as { properties: { name: { enum?: string[] } } }).properties.name.enum).toBeUndefined();
  });
});
