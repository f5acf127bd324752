// Remote runners with tokens of their own (QUIVER_RUNNER_TOKENS, QUIVER_RUNNER_TOKENS_FILE): a real
// server started from its environment, real runner processes, and hand-made runners playing a
// holder of the shared QUIVER_RUNNER_TOKEN who wants a bound runner's sessions (their calls carry
// git credentials). A bound token connects only as its id; nobody else gets that id, or one that
// passes for it, whether its runner is connected or not; the shared token still serves other ids.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { defaultRunnerId } from "../protocol/runner-id";
import { startQuiver, type Quiver } from "../app";
import { testServerEnv } from "../testing/env";
import { runShell, spawnRunner, tempDir, waitFor, type RunnerChild } from "../testing/runner";
import { helloRunner, SHARED_RUNNER_TOKEN as SHARED } from "../testing/runner-hello";

const root = join(import.meta.dirname, "../..");
const GPU1 = "gpu-1-own-token-0123456789abcdef";
const GPU2 = "gpu-2-own-token-0123456789abcdef";
const runnerEnv = { NODE_ENV: "test", QUIVER_SANDBOX: "off" } as const;

/** How a hand-made runner's hello ended: the server's close code, or "open" (it was taken). */
async function claim(url: string, token: string, runnerId: string, waitMs = 5_000): Promise<number | "open"> {
  const { ws, closed } = await helloRunner(url, token, runnerId);
  try {
    const open = new Promise<"open">((resolve) => setTimeout(() => resolve("open"), waitMs));
    return await Promise.race([closed.then((c) => c.code), open]);
  } finally {
    ws.terminate();
  }
}

describe("runners with tokens of their own", () => {
  let quiver: Quiver;
  let url = "";
  const logs: string[] = [];
  const cleanups: Array<() => Promise<unknown> | void> = [];
  const runners = () => quiver.services.runners;

  beforeAll(async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "quiver-runner-tokens-"));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    // gpu-2's pair comes from a file only its owner may read.
    const file = join(dataDir, "runner-tokens");
    writeFileSync(file, `# remote runners\ngpu-2=${GPU2}\n`, { mode: 0o600 });
    const env = testServerEnv(dataDir, {
      QUIVER_RUNNER_TOKEN: SHARED,
      QUIVER_RUNNER_TOKENS: `gpu-1=${GPU1}`,
      QUIVER_RUNNER_TOKENS_FILE: file,
    });
    quiver = await startQuiver({ env, root, web: false, log: (l) => logs.push(l) });
    cleanups.push(() => quiver.stop());
    url = `${quiver.url.replace(/^http/, "ws")}/runner`;
  }, 60_000);

  afterAll(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  }, 60_000);

  async function runner(token: string, id: string): Promise<RunnerChild> {
    const dir = await tempDir();
    const child = spawnRunner({ url, workspace: dir, token, args: ["--id", id], env: runnerEnv });
    cleanups.push(async () => {
      await child.stop();
      rmSync(dir, { recursive: true, force: true });
    });
    return child;
  }

  it("a shared-token holder cannot take a bound runner's id while it is away", async () => {
    expect(await claim(url, SHARED, "gpu-2")).toBe(4005);
    expect(runners().isLive("gpu-2")).toBe(false);
    expect(logs.join("\n")).toMatch(/runner id "gpu-2" refused: it is bound to another token/);
  });

  it("a bound token connects its runner as its id, and the shared token cannot take it over", async () => {
    const gpu1 = await runner(GPU1, "gpu-1");
    const before = await waitFor(
      () =>
        runners()
          .status()
          .find((r) => r.id === "gpu-1" && r.connected),
      30_000,
      "gpu-1 to connect",
    );
    // The exact id, and ids that would pass for it in a list of runners.
    for (const id of ["gpu-1", "GPU-1", "gpu-1 ", "gpu-1\u200b", "gpu\u20101", "g\u0440u-1", "ｇｐｕ-1", "gpu-l"])
      expect(await claim(url, SHARED, id), JSON.stringify(id)).toBe(4005);
    // An id with a newline is not an id at all.
    expect(await claim(url, SHARED, "gpu-1\n")).toBe(4002);
    // gpu-2's own token is no key to gpu-1 either.
    expect(await claim(url, GPU2, "gpu-1")).toBe(4005);
    // The runner's socket is the one it opened: never replaced, never closed.
    const after = runners()
      .status()
      .find((r) => r.id === "gpu-1");
    expect(after).toMatchObject({ connected: true, connectedAt: before.connectedAt });
    expect(
      runners()
        .status()
        .map((r) => r.id),
    ).toEqual(["gpu-1"]);
    expect(gpu1.stderr()).not.toMatch(/disconnected|replaced/);
    expect(logs.join("\n")).toMatch(/runner id "gpu-l" refused: it looks like runner id "gpu-1"/);
  }, 60_000);

  it("a bound token claiming another id is refused, and its runner says why without hammering", async () => {
    const wrong = await runner(GPU2, "gpu-9");
    // Its log lines are JSON off a terminal: the quotes in them are escaped.
    await waitFor(() => /the server refused runner \\?"gpu-9\\?" \(4005/.test(wrong.stderr()), 30_000, "the refusal");
    expect(wrong.stderr()).toMatch(/this token connects only as runner \\?"gpu-2\\?"/);
    expect(wrong.stderr()).toMatch(/its runner id is bound to another token, or its token to another runner id/);
    const first = Date.now();
    await new Promise((r) => setTimeout(r, 3_000));
    // Backing off: 250 ms doubling, not a reconnect each few hundred milliseconds for ever.
    const tries = wrong.stderr().match(/the server refused runner \\?"gpu-9/g)!.length;
    expect(tries, `${tries} refusals in ${Date.now() - first} ms`).toBeLessThanOrEqual(5);
    expect(runners().isLive("gpu-9")).toBe(false);
    expect(logs.join("\n")).toMatch(/runner id "gpu-9" refused: this token connects only as runner "gpu-2"/);
    await wrong.stop();
  }, 60_000);

  it("the shared token still connects a runner whose id nobody bound", async () => {
    await runner(SHARED, "cpu-1");
    await waitFor(() => runners().isLive("cpu-1"), 30_000, "cpu-1 to connect");
  }, 60_000);

  it("a bound token fetches upload archives, through the same throttled door", async () => {
    const get = (token: string) =>
      fetch(`${quiver.url}/api/uploads/no-such-upload`, { headers: { authorization: `Bearer ${token}` } });
    expect((await get(GPU1)).status).toBe(404);
    expect((await get(GPU2)).status).toBe(404);
    expect((await get(SHARED)).status).toBe(404);
    expect((await get("not-a-runner-token-0123456789")).status).toBe(401);
  });
});

describe("beside the local runner", () => {
  it("its id cannot be bound to a configured token: the server refuses to start", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "quiver-runner-tokens-"));
    try {
      mkdirSync(join(dataDir, "workspace"));
      const localId = defaultRunnerId(hostname(), realpathSync(join(dataDir, "workspace")));
      for (const id of [localId, localId.toUpperCase()]) {
        const env = testServerEnv(dataDir, { QUIVER_LOCAL_RUNNER: "1", QUIVER_RUNNER_TOKENS: `${id}=${GPU1}` });
        // A server that starts anyway is stopped before its local runner outlives the test.
        const outcome = await startQuiver({ env, root, web: false, log: () => {} }).then(
          (q) => q.stop().then(() => new Error("the server started")),
          (err: Error) => err,
        );
        expect(outcome.message).toContain(
          `Invalid QUIVER_RUNNER_TOKENS: entry 1: runner id ${JSON.stringify(id)} ${id === localId ? "is" : "looks like"} this server's local runner's id`,
        );
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("the agent's commands on it cannot read the tokens file", async (ctx) => {
    const dataDir = mkdtempSync(join(tmpdir(), "quiver-runner-tokens-"));
    // Outside the data folder (hidden anyway), where an operator would keep it (/etc/quiver), and
    // not under /tmp, which the sandbox replaces with its own.
    const etc = realpathSync(mkdtempSync("/var/tmp/quiver-etc-"));
    const file = join(etc, "runner-tokens");
    writeFileSync(file, `gpu-1=${GPU1}\n`, { mode: 0o600 });
    writeFileSync(join(etc, "beside.txt"), "visible\n");
    const env = testServerEnv(dataDir, {
      QUIVER_LOCAL_RUNNER: "1",
      QUIVER_SANDBOX: "auto",
      QUIVER_RUNNER_TOKENS_FILE: file,
    });
    const quiver = await startQuiver({ env, root, web: false, log: () => {} });
    try {
      const pool = quiver.services.runners;
      const local = await waitFor(() => pool.status().find((r) => r.connected), 30_000, "the local runner");
      if (!local.sandboxed) return ctx.skip("no sandbox here: an unsandboxed command reads what its user may");
      pool.bind("hide-probe", local.id);
      const r = await runShell(pool, `cat ${file} 2>&1; echo "[$(wc -c < ${file})]"; cat ${etc}/beside.txt`, {
        sessionId: "hide-probe",
      });
      expect(r.meta).toMatchObject({ sandboxed: true });
      expect(r.output).not.toContain(GPU1);
      expect(r.output).toMatch(/runner-tokens: Permission denied|\[0\]/);
      expect(r.output).toContain("visible"); // the folder around it is not hidden
    } finally {
      await quiver.stop();
      rmSync(dataDir, { recursive: true, force: true });
      rmSync(etc, { recursive: true, force: true });
    }
  }, 60_000);
});
