// Test harness (tests only): a real HTTP server with the runner pool on /runner, real runner
// child processes (tsx) on real temp workspaces, and a ToolContext whose remote goes through
// the pool to the runner.
import { spawn, type ChildProcess } from "node:child_process";
import { createServer, type Server } from "node:http";
import { mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Tool, ToolContext, ToolResult } from "../tools/tool";
import type { ExecResult } from "../executors/contract";
import { createRunnerPool, type RunnerPool, type RunnerPoolOptions } from "../executors/runner-pool";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

export async function waitFor<T>(
  check: () => T | undefined | false | Promise<T | undefined | false>,
  ms = 15_000,
  what = "condition",
): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export interface TestServer {
  pool: RunnerPool;
  port: number;
  url: string;
  logs: string[];
  close(): Promise<void>;
}

export async function startServer(
  options: Partial<RunnerPoolOptions> & { port?: number; token?: string } = {},
): Promise<TestServer> {
  const logs: string[] = [];
  const pool = createRunnerPool({ tokens: [options.token ?? TEST_TOKEN], log: (l) => logs.push(l), ...options });
  const server: Server = createServer((_req, res) => res.writeHead(404).end());
  server.on("upgrade", (req, socket, head) => {
    if ((req.url ?? "").split("?")[0] === "/runner") pool.handleUpgrade(req, socket, head);
    else socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, "127.0.0.1", () => resolve()));
  const port = (server.address() as { port: number }).port;
  return {
    pool,
    port,
    url: `ws://127.0.0.1:${port}/runner`,
    logs,
    async close() {
      await pool.dispose();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export const TEST_TOKEN = "test-token-0123456789abcdef";

export interface RunnerChild {
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr(): string;
  /** The last 64 KB it wrote on stdout (the runner logs on stderr; stdout is for what else prints). */
  stdout(): string;
  stop(): Promise<void>;
}

/** The last `n` lines of `text`, indented, or "(nothing)". */
function tail(text: string, n: number): string {
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  if (lines.length === 0) return " (nothing)";
  const shown = lines.slice(-n);
  const head = shown.length < lines.length ? ` (last ${shown.length} of ${lines.length} lines)` : "";
  return `${head}:\n${shown.map((l) => `  | ${l}`).join("\n")}`;
}

/** How the runner process is doing and what it last wrote: why it did not connect, for a CI log. */
export function runnerReport(runner: RunnerChild, lines = 40): string {
  const { child } = runner;
  const state =
    child.exitCode !== null
      ? `exited with code ${child.exitCode}`
      : child.signalCode !== null
        ? `was killed by ${child.signalCode}`
        : "is still running";
  return [
    `the runner process (pid ${child.pid ?? "none: it did not start"}) ${state}`,
    `its stderr${tail(runner.stderr(), lines)}`,
    `its stdout${tail(runner.stdout(), lines)}`,
  ].join("\n");
}

/**
 * waitFor for a runner to connect: a timeout's error adds the runner's exit and the last lines of
 * its output, which a bare "timed out" hides (a crash at start looks like a slow machine).
 * `runner`: a function when the helper may start it again meanwhile.
 */
export async function waitForRunner<T>(
  runner: RunnerChild | undefined | (() => RunnerChild | undefined),
  check: () => T | undefined | false | Promise<T | undefined | false>,
  ms: number,
  what: string,
): Promise<T> {
  try {
    return await waitFor(check, ms, what);
  } catch (err) {
    const child = typeof runner === "function" ? runner() : runner;
    if (!(err instanceof Error) || !err.message.startsWith("timed out")) throw err;
    throw new Error(`${err.message} (${ms} ms)\n${child ? runnerReport(child) : "no runner process was started"}`, {
      cause: err,
    });
  }
}

/** A runner process; `workspace: null` for a `--root` runner without a default folder (give --root in args). */
export function spawnRunner(opts: {
  url: string;
  workspace: string | null;
  token?: string | null;
  args?: string[];
  env?: NodeJS.ProcessEnv;
}): RunnerChild {
  const args = [
    "--import",
    "tsx",
    join(ROOT, "runner/main.ts"),
    "--server",
    opts.url,
    ...(opts.workspace !== null ? ["--workspace", opts.workspace] : []),
    ...(opts.args ?? []),
  ];
  const env: NodeJS.ProcessEnv = { ...process.env, ...opts.env };
  delete env.QUIVER_RUNNER_TOKEN;
  if (opts.token !== null) env.QUIVER_RUNNER_TOKEN = opts.token ?? TEST_TOKEN;
  const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  let err = "";
  let out = "";
  child.stderr!.on("data", (c: Buffer) => (err += c.toString()));
  child.stdout!.on("data", (c: Buffer) => (out = (out + c.toString()).slice(-64 * 1024)));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  return {
    child,
    exited,
    stderr: () => err,
    stdout: () => out,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      const t = setTimeout(() => child.kill("SIGKILL"), 5000);
      await exited;
      clearTimeout(t);
    },
  };
}

/**
 * The agent's shell tool run through `pool` in `sessionId` (default "s1"; bound to a runner
 * beforehand), its input (`command` and `input`'s other fields) parsed as the tool pipeline parses it.
 */
export async function runShell(
  pool: Pick<RunnerPool, "run">,
  command: string,
  o: { sessionId?: string; input?: Record<string, unknown> } = {},
): Promise<ExecResult> {
  // Loaded here: most suites on this harness run no shell, and need not load its analyser.
  const { shellTool } = await import("../tools/builtin/shell");
  const parsed = shellTool.parse({ ...o.input, command });
  if (!parsed.ok) throw new Error(parsed.error);
  return pool.run({
    sessionId: o.sessionId ?? "s1",
    callId: `c${Math.random()}`,
    op: "shell",
    input: parsed.value,
    deadline: Date.now() + 30_000,
    signal: new AbortController().signal,
  });
}

export async function tempDir(prefix = "quiver-ws-"): Promise<string> {
  return realpath(await mkdtemp(join(tmpdir(), prefix)));
}

/** A server + one connected runner on a fresh temp workspace, and a way to call tools through them. */
/** `connectMs`: how long the runner may take to connect (a loaded machine starts tsx slowly). */
export async function runnerHarness(opts: { args?: string[]; env?: NodeJS.ProcessEnv; connectMs?: number } = {}) {
  const dir = await tempDir();
  const server = await startServer();
  const runner = spawnRunner({ url: server.url, workspace: dir, args: opts.args, env: opts.env });
  try {
    const connected = () => server.pool.status().some((r) => r.connected);
    await waitForRunner(runner, connected, opts.connectMs ?? 20_000, "runner to connect");
  } catch (err) {
    // The caller gets no handle to close, so what was started for it goes here.
    await runner.stop();
    await server.close();
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  let calls = 0;
  const context = (sessionId = "s1", signal = new AbortController().signal): ToolContext => ({
    sessionId,
    callId: `c${++calls}`,
    signal,
    progress: () => {},
    services: {},
    remote: (input, o = {}) =>
      server.pool.run({
        sessionId,
        callId: `c${calls}`,
        op: o.op ?? currentTool,
        input,
        deadline: Date.now() + (o.timeoutMs ?? 30_000),
        signal,
        onProgress: o.onProgress,
      }),
  });
  let currentTool = "";
  /** parse → validateInput → execute, as the pipeline does; a respond error is returned as { error }. */
  async function call<I>(tool: Tool<I>, input: unknown, sessionId = "s1"): Promise<ToolResult & { error?: string }> {
    const parsed = tool.parse(input);
    if (!parsed.ok) return { output: "", error: `invalid input: ${JSON.stringify(parsed)}` };
    currentTool = tool.name;
    const ctx = context(sessionId);
    const problem = await tool.validateInput(parsed.value, ctx);
    if (problem) return { output: "", error: problem };
    try {
      return await tool.execute(parsed.value, ctx);
    } catch (e) {
      return { output: "", error: (e as Error).message };
    }
  }
  /** The tool's preview of its change (what an approval card shows). */
  async function preview<I>(tool: Tool<I>, input: unknown, sessionId = "s1") {
    const parsed = tool.parse(input);
    if (!parsed.ok) throw new Error(`invalid input: ${JSON.stringify(parsed)}`);
    currentTool = tool.name;
    return tool.preview(parsed.value, context(sessionId));
  }
  return {
    dir,
    server,
    runner,
    call,
    preview,
    async close() {
      await runner.stop();
      await server.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
