// A runner's identity is what its hello says, so a token that may say any id is a key to every
// runner: these tests hold the server to tokens bound to one runner id (the local runner's
// per-start token and its id), and to hello frames whose facts are bounded.
import { describe, expect, it } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startQuiver } from "../app";
import { cleanupsAfterEach } from "../testing/cleanups";
import { testServerEnv } from "../testing/env";
import { startServer, waitFor, type TestServer } from "../testing/runner";
import { helloRunner, SHARED_RUNNER_TOKEN as SHARED } from "../testing/runner-hello";

const root = join(import.meta.dirname, "../..");
const LOCAL = "local-runner-token-0123456789ab";

const cleanups = cleanupsAfterEach();

/** A hand-made runner saying hello as `runnerId` with `token`; `closed` is how the server ended it. */
const fakeRunner = (url: string, token: string, runnerId: string, extra: object = {}) =>
  helloRunner(url, token, runnerId, extra, cleanups);

async function pool(): Promise<TestServer> {
  const s = await startServer({ tokens: [{ token: LOCAL, runnerId: "local-1" }, SHARED] });
  cleanups.push(() => s.close());
  return s;
}

describe("runner identity", () => {
  it("the embedded server's local runner cannot be replaced by a holder of the shared token", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "quiver-identity-"));
    const env = testServerEnv(dataDir, { QUIVER_LOCAL_RUNNER: "1", QUIVER_RUNNER_TOKEN: SHARED });
    const quiver = await startQuiver({ env, root, web: false, log: () => {} });
    cleanups.push(async () => {
      await quiver.stop();
      rmSync(dataDir, { recursive: true, force: true });
    });
    type Health = { runners: { id: string; connected: boolean; connectedAt?: string }[] };
    const health = async () => (await (await fetch(`${quiver.url}/api/health`)).json()) as Health;
    const local = await waitFor(async () => (await health()).runners.find((r) => r.connected), 30_000, "local runner");
    const url = `${quiver.url.replace(/^http/, "ws")}/runner`;
    const impostor = await fakeRunner(url, SHARED, local.id);
    expect((await impostor.closed).code).toBe(4005);
    // The local runner's connection is the one the server still holds.
    const after = (await health()).runners.find((r) => r.id === local.id);
    expect(after).toMatchObject({ connected: true, connectedAt: local.connectedAt });
  }, 60_000);

  it("an id bound to a token is refused to every other token, connected or not", async () => {
    const s = await pool();
    const real = await fakeRunner(s.url, LOCAL, "local-1");
    await waitFor(() => s.pool.isLive("local-1"), 5_000, "local-1");
    const impostor = await fakeRunner(s.url, SHARED, "local-1");
    expect((await impostor.closed).code).toBe(4005);
    expect(s.pool.isLive("local-1")).toBe(true);
    // While the real one is away too.
    real.ws.close();
    await real.closed;
    await waitFor(() => !s.pool.isLive("local-1"), 5_000, "local-1 gone");
    const again = await fakeRunner(s.url, SHARED, "local-1");
    expect((await again.closed).code).toBe(4005);
    expect(s.pool.isLive("local-1")).toBe(false);
    expect(s.logs.join("\n")).toMatch(/runner id "local-1" refused: it is bound to another token/);
  });

  it("a bound token says no other id, and the same runner reconnecting with it replaces itself", async () => {
    const s = await pool();
    await fakeRunner(s.url, SHARED, "remote-1");
    await waitFor(() => s.pool.isLive("remote-1"), 5_000, "remote-1");
    const stolen = await fakeRunner(s.url, LOCAL, "remote-1");
    expect((await stolen.closed).code).toBe(4005);
    expect(s.pool.isLive("remote-1")).toBe(true);
    const first = await fakeRunner(s.url, LOCAL, "local-1");
    await waitFor(() => s.pool.isLive("local-1"), 5_000, "local-1");
    await fakeRunner(s.url, LOCAL, "local-1");
    expect((await first.closed).code).toBe(4004);
    expect(s.pool.isLive("local-1")).toBe(true);
  });

  it("refuses a hello with an id that is not one line or bounded, and bounds what else it says", async () => {
    const s = await pool();
    for (const [id, extra] of [
      ["x".repeat(201), {}],
      ["evil\nrunner fake-2 connected", {}],
      ["ok-1", { labels: ["a\u0000b"] }],
      ["ok-2", { labels: ["--x"] }],
    ] as Array<[string, object]>) {
      const f = await fakeRunner(s.url, SHARED, id, extra);
      expect((await f.closed).code, id.slice(0, 40)).toBe(4002);
    }
    expect(s.pool.status()).toEqual([]);
    // A probe's several lines of stderr are still said, on one line and cut.
    await fakeRunner(s.url, SHARED, "ok-3", {
      workspace: "/w\n".repeat(5_000),
      version: "v".repeat(1_000),
      sandbox: { available: false, kind: "none", reason: "bwrap: line one\nline two\u001b[31m" },
    });
    const st = await waitFor(() => s.pool.status().find((r) => r.id === "ok-3"), 5_000, "ok-3");
    expect(st.workspace).toHaveLength(4_096);
    expect(st.workspace).not.toMatch(/\n/);
    expect(st.version).toHaveLength(200);
    expect(st.sandbox.reason).toBe("bwrap: line one line two [31m");
  });

  it("a result's meta nested past its bound is not taken as the answer", async () => {
    const s = await pool();
    const f = await fakeRunner(s.url, SHARED, "deep");
    f.ws.on("message", (raw) => {
      const m = JSON.parse(raw.toString()) as { type: string; id: string };
      if (m.type !== "request") return;
      const deep = `{"type":"result","id":"${m.id}","ok":true,"output":"x","meta":{"a":${"[".repeat(100_000)}${"]".repeat(100_000)}}}`;
      f.ws.send(deep);
    });
    await waitFor(() => s.pool.isLive("deep"), 5_000, "deep");
    s.pool.bind("sess-deep", "deep");
    await expect(
      s.pool.run({
        sessionId: "sess-deep",
        callId: "c",
        op: "read_file",
        input: {},
        deadline: Date.now() + 500,
        signal: new AbortController().signal,
      }),
    ).rejects.toThrow(/deadline/);
    expect(s.logs.join("\n")).toMatch(/ignored frame \(bad frame: meta nests deeper than 64 levels\)/);
  });
});
