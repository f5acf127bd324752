// Health carries each runner's sandbox facts (why unsandboxed, what network), which the IDE's
// sandbox banner and approval cards say; a runner that reported none shows none.
import { tmpdir } from "node:os";
import { describe, expect, it } from "vitest";
import type { Db } from "../db";
import { healthCheck, type RunnerInfo } from "./health";

describe("health's runners", () => {
  it("pass on the sandbox a runner reported in hello", async () => {
    const runners: RunnerInfo[] = [
      {
        id: "a",
        connected: true,
        sandboxed: false,
        sandbox: { available: false, kind: "none", reason: "bubblewrap (bwrap) is not installed" },
        workspace: "/w",
      },
      { id: "b", connected: true, sandboxed: true, workspace: "/v" },
    ];
    const db = { $queryRawUnsafe: async () => [{ 1: 1 }] } as unknown as Db;
    const report = await healthCheck({
      db,
      provider: "sqlite",
      runners: { status: () => runners },
      probe: async () => {},
      dataDir: tmpdir(),
      minFreeMb: 0,
    })();
    expect(report.runners[0].sandbox).toEqual({
      available: false,
      kind: "none",
      reason: "bubblewrap (bwrap) is not installed",
    });
    expect(report.runners[1].sandbox).toBeUndefined();
  });
});
