// One configured MCP server: connects (with a deadline), lists its tools page by page, calls
// them, and follows `notifications/tools/list_changed`. A server that dies (a stdio child exits,
// an HTTP server stops answering) fails the calls in flight clearly and is started again on the
// next call, with a backoff that grows while it keeps failing and resets after a good call.
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult, Tool as McpTool } from "@modelcontextprotocol/sdk/types.js";
import { respond } from "../errors";
import type { McpServerConfig } from "./config";
import { openTransport, type OpenTransport } from "./transport";
import { errorText, listAll } from "./rpc";
import { loadedMcpSdk, mcpSdk } from "./sdk";

export type { McpTool };

export interface McpConnectionOptions {
  connectTimeoutMs: number;
  /** Per-call deadline when the server's config names none. */
  callTimeoutMs: number;
  /** Restart delays after repeated losses: 0, base, 2·base, … up to max. */
  backoff?: { baseMs: number; maxMs: number };
  log(line: string): void;
  /** The server's whole tool list, after every (re)connection and list_changed. */
  onTools(tools: McpTool[]): void;
}

const seconds = (ms: number) => `${Math.round(ms / 100) / 10} s`;

export class McpConnection {
  readonly name: string;
  readonly trusted: boolean;
  private client?: Client;
  private opened?: OpenTransport;
  private state: "idle" | "ready" | "lost" | "closed" = "idle";
  private connecting?: Promise<Client>;
  private losses = 0;
  private retryAt = 0;
  private lostWhy = "";
  private refreshing = Promise.resolve();

  constructor(
    readonly config: McpServerConfig,
    private readonly options: McpConnectionOptions,
  ) {
    this.name = config.name;
    this.trusted = config.trusted === true;
  }

  /** The first connection; throws a one-line reason when the server cannot be started. */
  async start(): Promise<void> {
    await this.connect();
  }

  /** Calls a tool; every failure but a cancel is a respond error that says what happened. */
  async call(
    tool: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
    retried = false,
  ): Promise<CallToolResult> {
    const client = await this.ready();
    const timeout = this.config.timeoutMs ?? this.options.callTimeoutMs;
    try {
      const result = (await client.callTool({ name: tool, arguments: args }, undefined, {
        signal,
        timeout,
      })) as CallToolResult;
      this.losses = 0;
      return result;
    } catch (e) {
      if (signal.aborted) throw e;
      // HTTP 404 = the server forgot our session (it restarted) and did not run the call:
      // open a new session and send it again, once.
      const sdk = loadedMcpSdk();
      if (!retried && sdk && e instanceof sdk.StreamableHTTPError && e.code === 404 && client === this.client) {
        this.lost(": its session ended (HTTP 404)", false);
        return this.call(tool, args, signal, true);
      }
      throw this.explain(e, client, tool, timeout);
    }
  }

  /** Last resort at process exit: SIGKILLs the stdio child, if any. */
  kill(): void {
    this.opened?.kill();
  }

  async close(): Promise<void> {
    this.state = "closed";
    const client = this.client;
    this.client = undefined;
    const sdk = loadedMcpSdk();
    if (sdk && client?.transport instanceof sdk.StreamableHTTPClientTransport) {
      // Lets the server drop its session now rather than when it times out.
      await Promise.race([
        client.transport.terminateSession().catch(() => undefined),
        new Promise((r) => setTimeout(r, 1000).unref()),
      ]);
    }
    await client?.close().catch(() => undefined);
  }

  private get exitedText(): string {
    return this.config.transport.kind === "stdio"
      ? `the MCP server ${this.name} exited`
      : `the connection to the MCP server ${this.name} was lost`;
  }

  private async ready(): Promise<Client> {
    if (this.state === "ready" && this.client) return this.client;
    if (this.state === "closed") throw respond(`The MCP server ${this.name} is shut down (the server is stopping).`);
    if (this.connecting) return this.connecting;
    const wait = this.retryAt - Date.now();
    if (wait > 0)
      throw respond(
        `${cap(this.exitedText)}${this.lostWhy}; it is restarted on a call after ${seconds(wait)}. Try again later.`,
      );
    try {
      return await this.connect();
    } catch (e) {
      this.lost(`: ${(e as Error).message}`, false);
      this.options.log(`mcp: the MCP server ${this.name} could not be restarted: ${(e as Error).message}`);
      throw respond(`The MCP server ${this.name} could not be restarted: ${(e as Error).message}`);
    }
  }

  private connect(): Promise<Client> {
    this.connecting ??= this.open().finally(() => (this.connecting = undefined));
    return this.connecting;
  }

  private async open(): Promise<Client> {
    const sdk = await mcpSdk();
    const opened = openTransport(this.config.transport, sdk);
    const client = new sdk.Client({ name: "quiver", version: "0.1.0" }, { capabilities: {} });
    client.onclose = () => {
      if (client === this.client && this.state === "ready")
        this.lost(opened.stderrTail() ? ` (stderr: ${opened.stderrTail()})` : "");
    };
    client.onerror = () => undefined; // stray transport errors surface as a failed request or a close
    client.setNotificationHandler(sdk.ToolListChangedNotificationSchema, () => this.refresh(client));
    const timeout = this.options.connectTimeoutMs;
    try {
      await client.connect(opened.transport, { timeout });
      const tools = await listAll(client, timeout);
      if (this.state === "closed") throw new Error("shut down while connecting");
      this.client = client;
      this.opened = opened;
      this.state = "ready";
      this.options.onTools(tools);
      return client;
    } catch (e) {
      opened.kill(); // it never became usable: no grace period
      await client.close().catch(() => undefined);
      const tail = opened.stderrTail();
      throw new Error(`${errorText(e)}${tail ? ` (stderr: ${tail})` : ""}`);
    }
  }

  private lost(why: string, log = true): void {
    if (this.state === "closed") return;
    const old = this.client;
    this.client = undefined;
    this.state = "lost";
    this.lostWhy = why;
    this.losses++;
    const { baseMs, maxMs } = this.options.backoff ?? { baseMs: 1000, maxMs: 60_000 };
    this.retryAt = Date.now() + (this.losses <= 1 ? 0 : Math.min(maxMs, baseMs * 2 ** (this.losses - 2)));
    if (log) this.options.log(`mcp: ${this.exitedText}${why}; it is restarted on the next call`);
    void old?.close().catch(() => undefined);
  }

  private explain(e: unknown, client: Client, tool: string, timeout: number): Error {
    const { McpError, ErrorCode } = loadedMcpSdk()!; // a client exists: the SDK is loaded
    if (e instanceof McpError && e.code === ErrorCode.RequestTimeout) {
      return respond(
        `${tool} on the MCP server ${this.name} did not answer within ${seconds(timeout)}, so it was cancelled. It may have done part of its work; check before calling it again.`,
      );
    }
    const closed = e instanceof McpError && e.code === ErrorCode.ConnectionClosed;
    // Anything below the protocol (fetch failed, HTTP 404 for a forgotten session) means the
    // connection is gone: reconnect on the next call.
    if (closed || !(e instanceof McpError) || client !== this.client) {
      if (client === this.client) this.lost(`: ${errorText(e)}`);
      return respond(
        `${cap(this.exitedText)} during the call to ${tool}${this.lostWhy}. It is started again on the next call; check whether the call had any effect before repeating it.`,
      );
    }
    return respond(`The MCP server ${this.name} refused the call to ${tool}: ${e.message}`);
  }

  private refresh(client: Client): void {
    this.refreshing = this.refreshing.then(async () => {
      if (client !== this.client) return;
      try {
        const tools = await listAll(client, this.options.connectTimeoutMs);
        if (client === this.client) this.options.onTools(tools);
      } catch (e) {
        this.options.log(`mcp: the tool list of ${this.name} could not be refreshed: ${errorText(e)}`);
      }
    });
  }
}

const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
