// The runner process: `tsx runner/main.ts --server ws://host:port/runner --token T --workspace DIR`
// (token also from QUIVER_RUNNER_TOKEN). Serves one workspace to the server it connects to,
// reconnecting when the server goes away; exits on SIGTERM/SIGINT or when --parent-pid dies.
// Refuses to start (exit 2) unsandboxed under QUIVER_SANDBOX=auto when the server is off loopback.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { hostname } from "node:os";
import { parseArgs } from "node:util";
import { RunnerClient } from "./client";
import { checkUnsandboxed, SandboxConfigError, type SandboxMode } from "./exec/sandbox";
import { loadExtensions } from "./extensions";
import { fileOps } from "./files";
import { OpRegistry, type RunnerExtension } from "./ops";
import { previewSupport } from "./preview";
import { Workspace, WorkspaceError } from "./workspace/workspace";

const EXIT_CONFIG = 2;
const EXIT_AUTH = 3;

function fail(message: string, code = EXIT_CONFIG): never {
  process.stderr.write(`quiver-runner: ${message}\n`);
  process.exit(code);
}

const log = (line: string) => process.stderr.write(`quiver-runner: ${line}\n`);

function positiveInt(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) fail(`--${name} must be a positive integer (got ${JSON.stringify(value)})`);
  return n;
}

async function main(): Promise<void> {
  let args;
  try {
    args = parseArgs({
      options: {
        server: { type: "string" },
        token: { type: "string" },
        workspace: { type: "string" },
        id: { type: "string" },
        "parent-pid": { type: "string" },
        "diff-max-bytes": { type: "string" },
        "diff-max-lines": { type: "string" },
        "diff-max-files": { type: "string" },
        "idle-timeout-ms": { type: "string" },
      },
      strict: true,
    }).values;
  } catch (err) {
    fail((err as Error).message);
  }
  const server = args.server ?? process.env.QUIVER_RUNNER_SERVER;
  const token = args.token ?? process.env.QUIVER_RUNNER_TOKEN;
  const dir = args.workspace ?? process.env.QUIVER_RUNNER_WORKSPACE;
  if (!server) fail("missing --server ws://host:port/runner");
  if (!/^wss?:\/\//.test(server)) fail(`--server must be a ws:// or wss:// URL (got ${JSON.stringify(server)})`);
  if (!token) fail("missing token: pass --token or set QUIVER_RUNNER_TOKEN");
  if (!dir) fail("missing --workspace DIR");
  const parentPid = positiveInt("parent-pid", args["parent-pid"]);

  let workspace: Workspace;
  try {
    workspace = await Workspace.open(dir, {
      budget: {
        maxBytes: positiveInt("diff-max-bytes", args["diff-max-bytes"]),
        maxLines: positiveInt("diff-max-lines", args["diff-max-lines"]),
        maxFiles: positiveInt("diff-max-files", args["diff-max-files"]),
      },
    });
  } catch (err) {
    if (err instanceof WorkspaceError) fail(err.message);
    throw err;
  }

  const shutdown = new AbortController();
  const registry = new OpRegistry();
  registry.register(fileOps);
  // Extensions load before the client exists; their frames go through it once it does.
  const link: { client?: RunnerClient } = {};
  let extensions: RunnerExtension[];
  try {
    extensions = await loadExtensions({
      workspace,
      signal: shutdown.signal,
      send: (m) => link.client?.send(m) ?? false,
    });
    const sandbox = extensions.find((e) => e.sandbox)?.sandbox ?? { available: false, kind: "none" };
    checkUnsandboxed((process.env.QUIVER_SANDBOX as SandboxMode | undefined) ?? "auto", sandbox, { host: process.env.HOST, serverUrl: server });
    if (!sandbox.available) log(`commands and terminals run UNSANDBOXED, with this runner's full rights: ${sandbox.reason ?? "no sandbox"}`);
  } catch (err) {
    if (err instanceof SandboxConfigError) fail(err.message);
    throw err;
  }
  for (const ext of extensions) if (ext.ops) registry.register(ext.ops);
  const preview = previewSupport({ serverUrl: server, send: (m) => link.client?.send(m) ?? false, network: extensions.find((e) => e.network)?.network });
  registry.register(preview.ops);

  const version = (JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }).version;
  const runnerId = args.id ?? `${hostname()}-${createHash("sha256").update(workspace.root).digest("hex").slice(0, 8)}`;
  const client = (link.client = new RunnerClient({
    url: server,
    token,
    runnerId,
    version,
    workspace,
    registry,
    pty: extensions.find((e) => e.pty)?.pty,
    preview: preview.handler,
    sandbox: extensions.find((e) => e.sandbox)?.sandbox ?? { available: false, kind: "none" },
    log,
    onAuthRefused: (status) => void stop(`the server refused the token (HTTP ${status})`, EXIT_AUTH),
    idleTimeoutMs: positiveInt("idle-timeout-ms", args["idle-timeout-ms"]),
  }));

  let stopping = false;
  async function stop(reason: string, code = 0): Promise<void> {
    if (stopping) return;
    stopping = true;
    log(`stopping: ${reason}`);
    clearInterval(parentWatch);
    shutdown.abort(new Error(reason));
    client.stop();
    preview.handler.connectionLost();
    for (const ext of extensions) await Promise.resolve(ext.dispose?.()).catch(() => {});
    await Promise.resolve(extensions.find((e) => e.pty)?.pty?.dispose()).catch(() => {});
    workspace.dispose();
    process.exit(code);
  }

  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGINT", () => void stop("SIGINT"));
  // A runner started by the server must not outlive it, even after a SIGKILL of the server.
  const parentWatch = setInterval(() => {
    if (parentPid === undefined) return;
    // Not process.ppid: under `tsx` the direct parent is tsx's own launcher process.
    try {
      process.kill(parentPid, 0);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ESRCH") void stop(`parent process ${parentPid} is gone`);
    }
  }, 500);
  if (parentPid === undefined) clearInterval(parentWatch);

  log(`serving ${workspace.root} as ${runnerId} (ops: ${registry.names().join(", ")})`);
  client.start();
}

main().catch((err) => fail(`crashed: ${(err as Error)?.stack ?? String(err)}`, 1));
