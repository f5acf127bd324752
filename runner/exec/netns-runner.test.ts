// The attack of issue 22 against the whole thing: a real Quiver server (no web app), where a
// request from loopback is the owner, and a real sandboxed runner process. A command granted
// network tries to set the org policy with one curl to Quiver's port; it must not get there.
// Then the runner is killed with SIGKILL: its namespace relay and slirp4netns must not survive.
import { rmSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startQuiver, type Quiver } from "../../server/app";
import { testServerEnv } from "../../server/testing/env";
import { runShell, spawnRunner, tempDir, TEST_TOKEN, waitFor, type RunnerChild } from "../../server/testing/runner";
import { findOnPath, sandboxInfo } from "./sandbox";
import { processesMatching, settledProcesses } from "../testing/exec";

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const ready = sandboxInfo("auto").available && !!findOnPath("slirp4netns");
const root = join(import.meta.dirname, "../..");

describe.runIf(ready)("a sandboxed command cannot become the owner through loopback (real server, real runner)", () => {
  let quiver: Quiver;
  let runner: RunnerChild;
  let dataDir: string;
  let workspace: string;

  beforeAll(async () => {
    dataDir = await tempDir("quiver-netns-data-");
    workspace = await tempDir("quiver-netns-ws-");
    const env = testServerEnv(dataDir, { QUIVER_RUNNER_TOKEN: TEST_TOKEN });
    quiver = await startQuiver({ env, root, web: false, log: () => {} });
    runner = spawnRunner({ url: `ws://127.0.0.1:${quiver.port}/runner`, workspace, env: { NODE_ENV: "test" } });
    await waitFor(() => quiver.services.runners.status().some((r) => r.connected), 30_000, "runner to connect");
  });
  afterAll(async () => {
    runner?.child.kill("SIGKILL");
    await quiver?.stop();
    for (const d of [dataDir, workspace]) if (d) rmSync(d, { recursive: true, force: true });
  });

  const shell = async (command: string) =>
    (await runShell(quiver.services.runners, command, { input: { network: true } })).output;

  it("the owner's loopback door is open to this test, so a refusal below is the sandbox's doing", async () => {
    const r = await fetch(`http://127.0.0.1:${quiver.port}/api/health`);
    expect(r.status).toBe(200);
  });

  it("curl from a command granted network to Quiver's policies.set, by every loopback name, is refused", async () => {
    const urls = [
      `127.0.0.1:${quiver.port}`,
      `localhost:${quiver.port}`,
      `[::1]:${quiver.port}`,
      `10.0.2.2:${quiver.port}`,
    ];
    const out = await shell(
      urls
        .map(
          (u) =>
            `curl -sS -m 5 -X POST -H 'content-type: application/json' --data '{"rules":[]}' 'http://${u}/api/trpc/policies.set'; echo " curl=$?"`,
        )
        .join("; "),
    );
    expect(out).not.toContain('"result"');
    expect(out).not.toContain("policies");
    expect(out.match(/curl=[1-9]\d*/g), out).toHaveLength(urls.length);
  });

  it("kill -9 of the runner takes the namespace's relay and slirp4netns with it", async () => {
    const pid = runner.child.pid!;
    const relays = await processesMatching(`quiver-netns-${pid}-`);
    expect(relays.length).toBeGreaterThan(0);
    const slirps: number[] = [];
    for (const p of await processesMatching("slirp4netns")) {
      const cmd = (await readFile(`/proc/${p}/cmdline`, "utf8").catch(() => "")).split("\0");
      if (relays.some((r) => cmd.includes(String(r)))) slirps.push(p);
    }
    expect(slirps).toHaveLength(1);
    runner.child.kill("SIGKILL");
    await runner.exited;
    expect(await settledProcesses(`quiver-netns-${pid}-`, 5000)).toEqual([]);
    const alive = slirps.filter((p) => {
      try {
        process.kill(p, 0);
        return true;
      } catch {
        return false;
      }
    });
    // A reaped pid may be reused by then; what matters is that no slirp4netns is left on it.
    for (const p of alive)
      expect(await readFile(`/proc/${p}/cmdline`, "utf8").catch(() => "")).not.toContain("slirp4netns");
  });
});
