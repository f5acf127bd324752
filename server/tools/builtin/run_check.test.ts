// run_check on a real runner over a temp workspace: the checks file's errors (missing, bad JSON,
// a bad field, each saying where), an unknown name refused with the list, a hostile argv passed
// literally (no shell), a scrubbed environment, exit codes and the timeout.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { existsSync } from "node:fs";
import { rm, writeFile } from "node:fs/promises";
import { runnerHarness } from "../../testing/runner";
import { parseChecksFile } from "../../protocol/checks";
import { runCheckTool } from "./run_check";

vi.setConfig({ testTimeout: 60_000, hookTimeout: 180_000 });

let h: Awaited<ReturnType<typeof runnerHarness>>;
beforeAll(async () => {
  h = await runnerHarness({ connectMs: 120_000 });
});
afterAll(async () => h?.close());

const checks = (value: unknown) =>
  writeFile(`${h.dir}/quiver.checks.json`, typeof value === "string" ? value : JSON.stringify(value, null, 2));

describe("quiver.checks.json", () => {
  it("a missing file says there are no checks and what to do", async () => {
    await rm(`${h.dir}/quiver.checks.json`, { force: true });
    const r = await h.call(runCheckTool, { name: "test" });
    expect(r.error).toMatch(
      /declares no checks: there is no quiver\.checks\.json at its root\. Ask the person to add and commit one/,
    );
  });

  it("invalid JSON names the line and column", async () => {
    await checks('{\n  "test": {\n    "argv": ["npm" "test"]\n  }\n}\n');
    const r = await h.call(runCheckTool, { name: "test" });
    expect(r.error).toMatch(/quiver\.checks\.json is not valid JSON at line 3, column \d+/);
  });

  it("an invalid field names its path and line", async () => {
    await checks({ test: { argv: ["npm", "test"] }, lint: { argv: [], timeoutMs: 10 } });
    const r = await h.call(runCheckTool, { name: "test" });
    expect(r.error).toMatch(/lint\.argv \(line 9\): argv needs at least the program/);
    expect(r.error).toMatch(/lint\.timeoutMs \(line 10\): Too small/);
    expect(parseChecksFile(JSON.stringify({ "bad name!": { argv: ["x"] } }))).toMatchObject({
      ok: false,
      error: expect.stringMatching(/a check name is/),
    });
    expect(parseChecksFile(JSON.stringify({ up: { argv: ["x"], cwd: "../elsewhere" } }))).toMatchObject({
      ok: false,
      error: expect.stringMatching(/up\.cwd.*inside the workspace/),
    });
    expect(parseChecksFile(JSON.stringify({ t: { argv: ["x"], shell: true } }))).toMatchObject({
      ok: false,
      error: expect.stringMatching(/Unrecognized key/i),
    });
  });
});

describe("run_check", () => {
  it("refuses an unknown name with the list of names", async () => {
    await checks({ test: { argv: ["true"] }, lint: { argv: ["true"] } });
    const r = await h.call(runCheckTool, { name: "tests" });
    expect(r.error).toBe('There is no check named "tests" in quiver.checks.json. The checks are: lint, test.');
  });

  it("passes shell metacharacters literally: no shell runs the argv", async () => {
    const hostile = ["a; rm -rf .; touch semi", "$(touch dollar)", "`touch tick`", "*", "> redirected", "$HOME"];
    await checks({ echo: { argv: ["printf", "[%s]\\n", ...hostile] } });
    await writeFile(`${h.dir}/keep.txt`, "still here\n");
    const r = await h.call(runCheckTool, { name: "echo" });
    expect(r.error).toBeUndefined();
    expect(r.output).toMatch(/^Check echo \(printf/);
    expect(r.output).toContain("Exit code: 0");
    for (const arg of hostile) expect(r.output).toContain(`[${arg}]`);
    for (const f of ["semi", "dollar", "tick", "redirected"]) expect(existsSync(`${h.dir}/${f}`), f).toBe(false);
    expect(existsSync(`${h.dir}/keep.txt`)).toBe(true);
  });

  it("runs in a scrubbed environment, in the declared cwd, and reports a failing exit code", async () => {
    await writeFile(`${h.dir}/sub-marker`, "");
    await checks({
      env: { argv: ["env"] },
      where: { argv: ["pwd"], cwd: "." },
      fails: { argv: ["sh", "-c", "echo nope; exit 3"] },
    });
    const env = await h.call(runCheckTool, { name: "env" });
    expect(env.output).toContain("PATH=");
    expect(env.output).not.toContain("QUIVER_RUNNER_TOKEN");
    const fails = await h.call(runCheckTool, { name: "fails" });
    expect(fails.isError).toBe(true);
    expect(fails.output).toContain("Exit code: 3");
    expect(fails.output).toContain("nope");
    expect(fails.meta).toMatchObject({ exitCode: 3, check: "fails", argv: ["sh", "-c", "echo nope; exit 3"] });
  });

  it("kills a check at its timeout", async () => {
    await checks({ slow: { argv: ["sleep", "30"], timeoutMs: 1000 } });
    const r = await h.call(runCheckTool, { name: "slow" });
    expect(r.isError).toBe(true);
    expect(r.output).toMatch(/Timed out after/);
    expect(r.meta).toMatchObject({ stopReason: "timeout" });
  });
});
