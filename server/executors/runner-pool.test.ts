// The runner channel end to end: real runner processes (tsx) on temp dirs, a real HTTP server
// with the pool on /runner, and raw ws clients where a misbehaving runner is needed.
import { describe, expect, it } from "vitest";
import { rm, writeFile } from "node:fs/promises";
import WebSocket from "ws";
import { parseLogLines } from "../protocol/log-line";
import type { ServerToRunner } from "../protocol/runner";
import { ExecutorUnavailableError } from "./contract";
import {
  spawnRunner,
  startServer,
  tempDir,
  TEST_TOKEN,
  waitFor,
  type RunnerChild,
  type TestServer,
} from "../testing/runner";
import { cleanupsAfterEach } from "../testing/cleanups";
import { helloRunner } from "../testing/runner-hello";

const cleanups = cleanupsAfterEach();

async function server(opts: Parameters<typeof startServer>[0] = {}): Promise<TestServer> {
  const s = await startServer(opts);
  cleanups.push(() => s.close());
  return s;
}
async function workspace(): Promise<string> {
  const d = await tempDir();
  cleanups.push(() => rm(d, { recursive: true, force: true }));
  return d;
}
function runner(opts: Parameters<typeof spawnRunner>[0]): RunnerChild {
  const r = spawnRunner(opts);
  cleanups.push(() => r.stop());
  return r;
}

/** A hand-driven runner: authenticates and says hello, then does only what the test tells it. */
async function fakeRunner(url: string, id = "fake"): Promise<{ ws: WebSocket; frames: ServerToRunner[] }> {
  const { ws } = await helloRunner(url, TEST_TOKEN, id, { sandbox: { available: false, kind: "none" } }, cleanups);
  const frames: ServerToRunner[] = [];
  ws.on("message", (d) => frames.push(JSON.parse(d.toString())));
  return { ws, frames };
}

function upgradeStatus(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, { headers });
    ws.on("unexpected-response", (_req, res) => {
      resolve(res.statusCode ?? 0);
      ws.terminate();
    });
    ws.on("open", () => {
      resolve(101);
      ws.close();
    });
    ws.on("error", () => {});
  });
}

describe("runner handshake", () => {
  it("a runner with the right token connects and reports hello facts", async () => {
    const s = await server();
    const dir = await workspace();
    const statuses: boolean[] = [];
    s.pool.onStatus((e) => statuses.push(e.connected));
    runner({ url: s.url, workspace: dir, args: ["--id", "r-good"] });
    const st = await waitFor(() => s.pool.status().find((r) => r.id === "r-good" && r.connected));
    expect(st.workspace).toBe(dir);
    expect(typeof st.sandboxed).toBe("boolean");
    expect(statuses).toEqual([true]);
    expect(s.pool.available("any-session")).toBe(true);
  });

  it("refuses a bad or missing token before any WebSocket exists, and the runner exits with code 3", async () => {
    const s = await server();
    expect(await upgradeStatus(s.url, {})).toBe(401);
    expect(await upgradeStatus(s.url, { authorization: "Bearer wrong-token-wrong-token" })).toBe(401);
    expect(await upgradeStatus(s.url, { authorization: TEST_TOKEN })).toBe(401); // no Bearer scheme
    expect(await upgradeStatus(s.url, { authorization: `Bearer ${TEST_TOKEN}` })).toBe(101);
    const r = runner({ url: s.url, workspace: await workspace(), token: "not-the-token-at-all" });
    expect((await r.exited).code).toBe(3);
    expect(r.stderr()).toContain("refused the token");
    expect(s.pool.status().filter((x) => x.connected)).toHaveLength(0);
  });

  it("refuses to start without a token or with a missing or non-directory workspace (exit 2, one clear line)", async () => {
    const dir = await workspace();
    const noToken = spawnRunner({ url: "ws://127.0.0.1:9/runner", workspace: dir, token: null });
    expect((await noToken.exited).code).toBe(2);
    expect(noToken.stderr()).toMatch(/missing token/);
    const missing = spawnRunner({ url: "ws://127.0.0.1:9/runner", workspace: `${dir}/nope` });
    expect((await missing.exited).code).toBe(2);
    expect(parseLogLines(missing.stderr())).toEqual([
      expect.objectContaining({ level: 50, scope: "runner", msg: `workspace ${dir}/nope does not exist` }),
    ]);
    await writeFile(`${dir}/file`, "x");
    const notDir = spawnRunner({ url: "ws://127.0.0.1:9/runner", workspace: `${dir}/file` });
    expect((await notDir.exited).code).toBe(2);
    expect(notDir.stderr()).toMatch(/is not a directory/);
  });

  it("closes a connection whose first frame is not a hello of this protocol version", async () => {
    const s = await server();
    const ws = new WebSocket(s.url, { headers: { authorization: `Bearer ${TEST_TOKEN}` } });
    await new Promise((r) => ws.once("open", r));
    const closed = new Promise<number>((r) => ws.once("close", (code) => r(code)));
    ws.send(
      JSON.stringify({
        type: "hello",
        protocol: 999,
        runnerId: "x",
        workspace: "/",
        version: "t",
        sandbox: { available: false, kind: "none" },
        workspaceVersion: 0,
      }),
    );
    expect(await closed).toBe(4003);
  });
});

describe("liveness", () => {
  it("answers pings (stays connected over many intervals) and a peer that stops answering is dropped", async () => {
    const s = await server({ pingIntervalMs: 100 });
    runner({ url: s.url, workspace: await workspace(), args: ["--id", "real"] });
    await waitFor(() => s.pool.status().find((r) => r.id === "real" && r.connected));
    const silent = await fakeRunner(s.url, "silent");
    await waitFor(() => s.pool.status().find((r) => r.id === "silent" && r.connected));
    await waitFor(() => s.pool.status().find((r) => r.id === "silent" && !r.connected), 5000, "silent runner dropped");
    expect(silent.frames.some((f) => f.type === "ping")).toBe(true);
    expect(s.pool.status().find((r) => r.id === "real")?.connected).toBe(true);
  });

  it("reconnects with backoff after the server restarts on the same port", async () => {
    const first = await startServer();
    const r = runner({ url: first.url, workspace: await workspace(), args: ["--id", "comeback"] });
    await waitFor(() => first.pool.status().find((x) => x.connected));
    await first.close();
    await new Promise((res) => setTimeout(res, 300));
    const second = await server({ port: first.port });
    await waitFor(() => second.pool.status().find((x) => x.id === "comeback" && x.connected), 20_000, "reconnect");
    expect(r.stderr()).toMatch(/reconnecting in \d+ ms/);
    expect(r.child.exitCode).toBeNull();
  });

  it("exits cleanly on SIGTERM and when its --parent-pid dies", async () => {
    const s = await server();
    const dir = await workspace();
    const r = runner({ url: s.url, workspace: dir });
    await waitFor(() => s.pool.status().find((x) => x.connected));
    r.child.kill("SIGTERM");
    expect((await r.exited).code).toBe(0);
    await waitFor(() => s.pool.status().every((x) => !x.connected), 5000, "gone after SIGTERM");

    const parent = spawnRunner({ url: "ws://127.0.0.1:9/runner", workspace: dir }); // any long-lived process
    cleanups.push(() => parent.stop());
    const child = runner({ url: s.url, workspace: dir, args: ["--parent-pid", String(parent.child.pid)] });
    await waitFor(() => s.pool.status().find((x) => x.connected));
    parent.child.kill("SIGKILL");
    expect((await child.exited).code).toBe(0);
    expect(child.stderr()).toMatch(/parent process \d+ is gone/);
  });
});

describe("requests", () => {
  it("correlates results, streams progress, and sends cancel when the call's signal aborts", async () => {
    const s = await server();
    const fake = await fakeRunner(s.url);
    await waitFor(() => s.pool.status().find((r) => r.connected));
    const chunks: string[] = [];
    const a = s.pool.run({
      sessionId: "s",
      callId: "c1",
      op: "read_file",
      input: { path: "a" },
      deadline: Date.now() + 10_000,
      signal: new AbortController().signal,
      onProgress: (c) => chunks.push(c),
    });
    const req = await waitFor(() => fake.frames.find((f) => f.type === "request"));
    if (req.type !== "request") throw new Error("unreachable");
    expect(req).toMatchObject({ sessionId: "s", op: "read_file", input: { path: "a" } });
    fake.ws.send(JSON.stringify({ type: "progress", id: req.id, chunk: "half" }));
    fake.ws.send(JSON.stringify({ type: "result", id: req.id, ok: true, output: "done", meta: { n: 1 } }));
    expect(await a).toEqual({ ok: true, output: "done", meta: { n: 1 } });
    expect(chunks).toEqual(["half"]);

    const ctrl = new AbortController();
    const b = s.pool.run({
      sessionId: "s",
      callId: "c2",
      op: "shell",
      input: {},
      deadline: Date.now() + 10_000,
      signal: ctrl.signal,
    });
    const second = await waitFor(() => fake.frames.filter((f) => f.type === "request")[1]);
    ctrl.abort();
    expect(await b).toMatchObject({ ok: false, meta: { cancelled: true } });
    await waitFor(
      () => fake.frames.find((f) => f.type === "cancel" && "id" in second && f.id === second.id),
      2000,
      "cancel frame",
    );
  });

  it("joins a flood of progress frames and stops live output past 1 MB a call, whatever the runner sends", async () => {
    const s = await server();
    const fake = await fakeRunner(s.url);
    await waitFor(() => s.pool.status().find((r) => r.connected));
    const chunks: string[] = [];
    const call = s.pool.run({
      sessionId: "s",
      callId: "c1",
      op: "shell",
      input: {},
      deadline: Date.now() + 30_000,
      signal: new AbortController().signal,
      onProgress: (c) => chunks.push(c),
    });
    const req = await waitFor(() => fake.frames.find((f) => f.type === "request"));
    if (req.type !== "request") throw new Error("unreachable");
    const started = Date.now();
    // A frame per character (each would be an event row and a message to every viewer), then 1.5 MB.
    for (let i = 0; i < 20_000; i++)
      fake.ws.send(JSON.stringify({ type: "progress", id: req.id, chunk: String(i % 10) }));
    const big = "x".repeat(100_000);
    for (let i = 0; i < 15; i++) fake.ws.send(JSON.stringify({ type: "progress", id: req.id, chunk: big }));
    fake.ws.send(JSON.stringify({ type: "result", id: req.id, ok: true, output: "done" }));
    expect(await call).toEqual({ ok: true, output: "done" });
    const elapsed = Date.now() - started;
    // At most one chunk an interval (50 ms), or one per 64 KB held.
    expect(chunks.length).toBeLessThanOrEqual(Math.ceil(elapsed / 50) + Math.ceil(1_020_000 / 65_536) + 2);
    const text = chunks.join("");
    const digits = Array.from({ length: 20_000 }, (_, i) => String(i % 10)).join("");
    expect(text.startsWith(digits + "x")).toBe(true);
    expect(text.endsWith("\n… [live output stopped; the result has the rest] …\n")).toBe(true);
    expect(text.length).toBeLessThan(1_000_100);
  });

  it("fails every in-flight request with a clear error when the runner disconnects, and refuses new ones", async () => {
    const s = await server();
    const fake = await fakeRunner(s.url, "doomed");
    await waitFor(() => s.pool.status().find((r) => r.connected));
    const signal = new AbortController().signal;
    const calls = [1, 2, 3].map((n) =>
      s.pool.run({
        sessionId: "s",
        callId: `c${n}`,
        op: "search_text",
        input: {},
        deadline: Date.now() + 60_000,
        signal,
      }),
    );
    await waitFor(() => fake.frames.filter((f) => f.type === "request").length === 3);
    fake.ws.terminate();
    for (const c of calls) {
      await expect(c).rejects.toBeInstanceOf(ExecutorUnavailableError);
      await expect(c).rejects.toThrow(/runner doomed disconnected while search_text was running/);
      await expect(c).rejects.toMatchObject({ started: true }); // it may have run in part
    }
    expect(s.pool.available("s")).toBe(false);
    const refused = s.pool.run({
      sessionId: "s",
      callId: "c4",
      op: "read_file",
      input: {},
      deadline: Date.now() + 1000,
      signal,
    });
    await expect(refused).rejects.toThrow(/workspace is on runner doomed, which is not connected \(gone since /);
    await expect(refused).rejects.toMatchObject({ started: false });
  });

  it("fails a request whose runner never answers once its deadline has passed", async () => {
    const s = await server();
    const fake = await fakeRunner(s.url);
    await waitFor(() => s.pool.status().find((r) => r.connected));
    const started = Date.now();
    const p = s.pool.run({
      sessionId: "s",
      callId: "c",
      op: "read_file",
      input: {},
      deadline: Date.now() + 200,
      signal: new AbortController().signal,
    });
    await expect(p).rejects.toThrow(/passed its deadline/);
    await expect(p).rejects.toMatchObject({ started: true });
    expect(Date.now() - started).toBeGreaterThanOrEqual(200);
    await waitFor(() => fake.frames.some((f) => f.type === "cancel"), 2000, "cancel frame");
  });

  it("binds a session to one runner and keeps it there while other runners come and go", async () => {
    const s = await server();
    const [d1, d2] = [await workspace(), await workspace()];
    runner({ url: s.url, workspace: d1, args: ["--id", "one"] });
    await waitFor(() => s.pool.status().find((r) => r.id === "one" && r.connected));
    const two = runner({ url: s.url, workspace: d2, args: ["--id", "two"] });
    await waitFor(() => s.pool.status().find((r) => r.id === "two" && r.connected));
    expect(s.pool.bind("a")).toBe("one");
    expect(s.pool.bind("b")).toBe("two"); // least busy
    expect(s.pool.bind("c", "two")).toBe("two");
    const signal = new AbortController().signal;
    await writeFile(`${d2}/only-in-two.txt`, "two\n");
    const r = await s.pool.run({
      sessionId: "c",
      callId: "x",
      op: "read_file",
      input: { path: "only-in-two.txt" },
      deadline: Date.now() + 10_000,
      signal,
    });
    expect(r).toMatchObject({ ok: true });
    await two.stop();
    await waitFor(() => !s.pool.available("c"), 5000, "session c unavailable");
    expect(s.pool.available("a")).toBe(true);
    expect(s.pool.status().find((x) => x.id === "one")?.sessions).toBe(1);
  });

  it("answers an unknown op or invalid input with a failed result, not a hang", async () => {
    const s = await server();
    runner({ url: s.url, workspace: await workspace() });
    await waitFor(() => s.pool.status().find((r) => r.connected));
    const signal = new AbortController().signal;
    const unknown = await s.pool.run({
      sessionId: "s",
      callId: "c",
      op: "nope",
      input: {},
      deadline: Date.now() + 10_000,
      signal,
    });
    expect(unknown.ok).toBe(false);
    expect(unknown.output).toMatch(/unknown operation "nope"; this runner serves: .*read_file/);
    const bad = await s.pool.run({
      sessionId: "s",
      callId: "c",
      op: "read_file",
      input: { path: 5 },
      deadline: Date.now() + 10_000,
      signal,
    });
    expect(bad).toMatchObject({ ok: false });
    expect(bad.output).toMatch(/invalid input for read_file: path/);
  });
});

describe("workspace change events", () => {
  it("reports tool writes and the person's own edits with increasing versions", async () => {
    const s = await server();
    const dir = await workspace();
    runner({ url: s.url, workspace: dir });
    await waitFor(() => s.pool.status().find((r) => r.connected));
    s.pool.bind("s");
    const events: Array<{ paths: string[]; version: number; sessionIds: string[] }> = [];
    s.pool.onFilesChanged((e) => events.push(e));
    const signal = new AbortController().signal;
    const w = await s.pool.run({
      sessionId: "s",
      callId: "c",
      op: "write_file",
      input: { path: "new.txt", content: "hi\n" },
      deadline: Date.now() + 10_000,
      signal,
    });
    expect(w.ok).toBe(true);
    await waitFor(() => events.find((e) => e.paths.includes("new.txt")));
    await writeFile(`${dir}/by-hand.txt`, "typed in the terminal\n");
    await waitFor(() => events.find((e) => e.paths.includes("by-hand.txt")), 5000, "watcher event");
    const versions = events.map((e) => e.version);
    expect(versions).toEqual([...versions].sort((a, b) => a - b));
    expect(events[0].sessionIds).toEqual(["s"]);
    expect(s.pool.workspaceVersion("s")).toBe(versions[versions.length - 1]);
  });
});
