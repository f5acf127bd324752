// Opens the SDK transport of one configured server: a child process over stdio (its stderr kept
// as a short tail for error messages rather than mixed into the server's own output) or
// Streamable HTTP with the configured headers, its answers read up to a bound (bounded-fetch.ts).
// A new transport per connection attempt.
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { McpTransportConfig } from "./config";
import type { McpSdk } from "./sdk";
import { boundedFetch, MCP_ANSWER_MAX } from "./bounded-fetch";

const TAIL_BYTES = 2000;

export interface OpenTransport {
  transport: Transport;
  /** SIGKILLs the child if it still runs (stdio): a start that failed, or the process exiting. */
  kill(): void;
  /** The last lines the child wrote to stderr (stdio), trimmed. */
  stderrTail(): string;
}

/** `answerMax`: the most of one HTTP answer read (tests give a small one). */
export function openTransport(config: McpTransportConfig, sdk: McpSdk, answerMax = MCP_ANSWER_MAX): OpenTransport {
  if (config.kind === "http") {
    const transport = new sdk.StreamableHTTPClientTransport(new URL(config.url), {
      requestInit: { headers: config.headers },
      fetch: boundedFetch(answerMax),
    });
    return { transport, kill: () => undefined, stderrTail: () => "" };
  }
  const transport = new sdk.StdioClientTransport({
    command: config.command,
    args: config.args,
    // The SDK adds a safe default environment (PATH, HOME, …) under these; no secrets leak in.
    env: config.env,
    cwd: config.cwd,
    stderr: "pipe",
  });
  let tail = "";
  transport.stderr?.on("data", (chunk: Buffer) => {
    tail = (tail + chunk.toString("utf8")).slice(-TAIL_BYTES);
  });
  // The SDK forgets the pid as soon as it starts closing, and its close waits seconds before
  // SIGTERM: the pid is kept here so a child can be killed at once. The SDK chains this onclose.
  let pid: number | null = null;
  let exited = false;
  const start = transport.start.bind(transport);
  transport.start = async () => {
    await start();
    pid = transport.pid;
  };
  transport.onclose = () => void (exited = true);
  const kill = () => {
    if (pid === null || exited) return;
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      /* already gone */
    }
  };
  return { transport, kill, stderrTail: () => tail.trim().split("\n").slice(-5).join("\n") };
}
