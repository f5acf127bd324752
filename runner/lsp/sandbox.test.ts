// Where bubblewrap works: the workspace's language server runs inside the commands' sandbox with
// the network off (its process is bwrap's, with --unshare-net), and still answers: only Quiver's
// typescript and typescript-language-server packages are bound into it from the hidden install.
// Skipped where the runner cannot sandbox (no bwrap), as the other sandbox tests are.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { sandboxInfo } from "../exec/sandbox";
import { runnerHarness } from "../../server/testing/runner";
import { writeFileTool } from "../../server/tools/builtin/write_file";

const bwrap = sandboxInfo("auto").available;

describe.skipIf(!bwrap)("the language server in the sandbox", () => {
  let h: Awaited<ReturnType<typeof runnerHarness>>;
  beforeAll(async () => {
    process.env.QUIVER_DIAGNOSTICS_MS = "100000";
    h = await runnerHarness();
    delete process.env.QUIVER_DIAGNOSTICS_MS;
  }, 60_000);
  afterAll(async () => {
    await h?.close();
  });

  it("answers from inside bubblewrap, network off", async () => {
    const wrote = await h.call(writeFileTool, { path: "a.ts", content: "export const n: number = 'x';\n" });
    expect(wrote.output).toMatch(/a\.ts:1:14 error TS2322/);
    const rows = execFileSync("ps", ["-eo", "pid=,ppid=,args="], { encoding: "utf8" })
      .trim()
      .split("\n")
      .map((l) => l.trim().split(/\s+/));
    const kids = (p: number): string[][] =>
      rows.filter((r) => Number(r[1]) === p).flatMap((r) => [r, ...kids(Number(r[0]))]);
    const under = kids(h.runner.child.pid!);
    const wrapper = under.find(
      (r) => r.slice(2).join(" ").includes("typescript-language-server") && /bwrap/.test(r[2]),
    );
    expect(wrapper?.slice(2).join(" ")).toMatch(/--unshare-net/);
  }, 150_000);
});
