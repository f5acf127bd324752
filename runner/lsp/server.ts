// One workspace's TypeScript language server (`typescript-language-server --stdio`, speaking LSP
// over vscode-jsonrpc): started lazily on the first diagnostics asked, stopped after it sat idle,
// started again when it died. It runs as the runner's other helpers do (workspace/helpers.ts): in
// the commands' sandbox with the network off when there is one, because a workspace's tsconfig can
// name tsserver plugins and the files it reads are the agent's. Whatever the sandbox: tsserver is
// Quiver's own (never the workspace's node_modules/typescript), no plugin is loaded from the
// workspace (no --allowLocalPluginLoads, no probe locations), typings are never fetched, and its
// memory is bounded. Diagnostics are asked synchronously of tsserver (syntactic and semantic
// DiagnosticsSync) after the file's text is synced, so the answer is complete, not a debounced
// partial push.
import { spawn, type ChildProcess } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import {
  createMessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
  type MessageConnection,
} from "vscode-jsonrpc/node";
import { vanishedCover } from "../exec/host-sockets";
import type { Helpers } from "../workspace/helpers";

const require = createRequire(import.meta.url);
const TS_LIB = dirname(require.resolve("typescript"));
const TSLS_CLI = join(dirname(require.resolve("typescript-language-server/package.json")), "lib/cli.mjs");
/** What the sandbox must show of Quiver's install (it hides the rest). */
const READ_ONLY = [dirname(TS_LIB), dirname(dirname(TSLS_CLI))];

export interface Diagnostic {
  line: number;
  column: number;
  endLine: number;
  endColumn: number;
  severity: "error" | "warning" | "info";
  code?: number;
  message: string;
}

export interface LanguageServerOptions {
  /** Stopped after this long without a question (default 5 min). */
  idleMs?: number;
  /** tsserver's heap (its --max-old-space-size; default 1024 MB); the LSP bridge itself gets 256 MB. */
  memoryMb?: number;
  log?: (line: string) => void;
}

interface TsDiagnostic {
  start: { line: number; offset: number };
  end: { line: number; offset: number };
  text: string;
  code?: number;
  category: string;
}

interface Live {
  child: ChildProcess;
  rpc: MessageConnection;
  docs: Map<string, { version: number; text: string }>;
}

const LANGUAGE: Record<string, string> = {
  ts: "typescript",
  mts: "typescript",
  cts: "typescript",
  tsx: "typescriptreact",
  js: "javascript",
  mjs: "javascript",
  cjs: "javascript",
  jsx: "javascriptreact",
};

/** The LSP language of a path the TypeScript server checks, or undefined. */
export function languageOf(path: string): string | undefined {
  const ext = /\.([a-z]+)$/i.exec(path)?.[1]?.toLowerCase();
  return ext ? LANGUAGE[ext] : undefined;
}

export class TypeScriptServer {
  private live?: Promise<Live>;
  private idle?: NodeJS.Timeout;
  private disposed = false;
  /** How many times it was started (tests: a dead one is started again). */
  starts = 0;

  constructor(
    private readonly root: string,
    private readonly helpers: Helpers,
    private readonly o: LanguageServerOptions = {},
  ) {}

  /** The diagnostics of `rel` with `text` as its content (what was just written). */
  async diagnostics(rel: string, text: string): Promise<Diagnostic[]> {
    if (this.disposed) throw new Error("the workspace is closed");
    const live = await this.start();
    this.touch();
    const file = join(this.root, rel);
    const uri = pathToFileURL(file).href;
    const doc = live.docs.get(uri);
    if (!doc) {
      live.docs.set(uri, { version: 1, text });
      await live.rpc.sendNotification("textDocument/didOpen", {
        textDocument: { uri, languageId: languageOf(rel) ?? "typescript", version: 1, text },
      });
    } else if (doc.text !== text) {
      doc.version += 1;
      doc.text = text;
      await live.rpc.sendNotification("textDocument/didChange", {
        textDocument: { uri, version: doc.version },
        contentChanges: [{ text }],
      });
    }
    const ask = async (command: string): Promise<TsDiagnostic[]> => {
      const r = (await live.rpc.sendRequest("workspace/executeCommand", {
        command: "typescript.tsserverRequest",
        arguments: [command, { file, includeLinePosition: false }],
      })) as { body?: TsDiagnostic[] } | undefined;
      return Array.isArray(r?.body) ? r.body : [];
    };
    const [syntax, semantic] = await Promise.all([ask("syntacticDiagnosticsSync"), ask("semanticDiagnosticsSync")]);
    this.touch();
    return [...syntax, ...semantic].map((d) => ({
      line: d.start.line,
      column: d.start.offset,
      endLine: d.end.line,
      endColumn: d.end.offset,
      severity: d.category === "error" ? "error" : d.category === "warning" ? "warning" : "info",
      ...(typeof d.code === "number" ? { code: d.code } : {}),
      message: d.text,
    }));
  }

  /** Starts it without waiting (a TS/JS file was read: an edit is likely to follow). */
  warm(): void {
    if (this.disposed) return;
    this.start().then(
      () => this.touch(),
      () => {},
    );
  }

  /** Running now (tests, and the runner's own accounting). */
  get pid(): number | undefined {
    return this.current?.child.pid;
  }
  private current?: Live;

  private touch(): void {
    clearTimeout(this.idle);
    this.idle = setTimeout(() => void this.stop(), this.o.idleMs ?? 5 * 60_000);
    this.idle.unref();
  }

  private start(): Promise<Live> {
    this.live ??= this.launch().catch((err) => {
      this.live = undefined;
      throw err;
    });
    return this.live;
  }

  private async launch(): Promise<Live> {
    try {
      return await this.launchOnce();
    } catch (err) {
      // Once more with a fresh listing when a host socket vanished as its sandbox started (host-sockets.ts).
      if (err instanceof SocketRace) return this.launchOnce();
      throw err;
    }
  }

  private async launchOnce(): Promise<Live> {
    this.starts++;
    const cmd = this.helpers.spawn(
      [process.execPath, "--max-old-space-size=256", TSLS_CLI, "--stdio"],
      {},
      { readOnly: READ_ONLY },
    );
    // Its own process group: stopping it takes tsserver along (unsandboxed; the sandbox's pid namespace does it otherwise).
    const child = spawn(cmd.file, cmd.args, {
      cwd: cmd.cwd,
      env: cmd.env,
      stdio: ["pipe", "pipe", "pipe"],
      detached: true,
    });
    let stderr = "";
    child.stderr!.on("data", (b: Buffer) => void (stderr = (stderr + b.toString("utf8")).slice(-2000)));
    const rpc = createMessageConnection(new StreamMessageReader(child.stdout!), new StreamMessageWriter(child.stdin!));
    const live: Live = { child, rpc, docs: new Map() };
    const exited = new Promise<never>((_, reject) =>
      child.once("exit", (code, signal) => {
        // A start that failed is start()'s to forget (launch may be trying again).
        const started = this.current === live;
        if (started) {
          this.current = undefined;
          this.live = undefined;
        }
        // bwrap's error may still be in the pipe when it exits: its close, or a moment, gives the rest.
        const closed = new Promise((r) => (child.once("close", r), setTimeout(r, 200).unref()));
        void closed.then(() => {
          this.o.log?.(
            `typescript-language-server exited (${signal ?? code})${stderr ? `: ${stderr.trim().split("\n").slice(-3).join(" | ")}` : ""}`,
          );
          const race = !started && vanishedCover(stderr, cmd.args);
          reject(race ? new SocketRace(race) : new Error(`the language server exited (${signal ?? code})`));
          // Rejects a pending initialize: only after the exit's own error, which start must see.
          rpc.dispose();
        });
      }),
    );
    exited.catch(() => {});
    child.once("error", (err) => this.o.log?.(`typescript-language-server could not start: ${err.message}`));
    rpc.onError(() => {});
    rpc.listen();
    const sandboxed = this.helpers.sandboxed;
    await Promise.race([
      exited,
      rpc.sendRequest("initialize", {
        // Outside the sandbox it watches the runner's pid and leaves with it; inside, the pid
        // namespace hides it and bubblewrap's --die-with-parent does that.
        processId: sandboxed ? null : process.pid,
        rootUri: pathToFileURL(this.root).href,
        workspaceFolders: null,
        capabilities: { textDocument: { publishDiagnostics: {} } },
        initializationOptions: {
          tsserver: { path: join(TS_LIB, "tsserver.js"), useSyntaxServer: "never" },
          disableAutomaticTypingAcquisition: true,
          maxTsServerMemory: this.o.memoryMb ?? 1024,
          plugins: [],
        },
      }),
    ]);
    await rpc.sendNotification("initialized", {});
    this.current = live;
    return live;
  }

  /** Stops the server (idle, or its workspace closing); the next question starts it again. */
  async stop(): Promise<void> {
    clearTimeout(this.idle);
    const live = await this.live?.catch(() => undefined);
    this.live = undefined;
    if (!live || live.child.exitCode !== null || live.child.signalCode !== null) return;
    const gone = new Promise<void>((r) => live.child.once("exit", () => r()));
    try {
      await Promise.race([
        live.rpc.sendRequest("shutdown").then(() => live.rpc.sendNotification("exit")),
        new Promise((r) => setTimeout(r, 1000)),
      ]);
    } catch {
      /* it is being killed below anyway */
    }
    const kill = setTimeout(() => {
      try {
        process.kill(-live.child.pid!, "SIGKILL");
      } catch {
        live.child.kill("SIGKILL");
      }
    }, 1000);
    await gone;
    clearTimeout(kill);
    // tsserver, should the bridge have left without it.
    try {
      process.kill(-live.child.pid!, "SIGKILL");
    } catch {
      /* the group is gone */
    }
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    await this.stop();
  }
}

/** The sandbox could not start: the host socket `path` it was to cover went away meanwhile. */
class SocketRace extends Error {
  constructor(path: string) {
    super(`${path} went away while the language server's sandbox started`);
  }
}
