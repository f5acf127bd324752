// The runner's operation registry: op name → zod input schema + run(). A `request` frame names
// an op; main.ts validates the input with the op's schema and runs it with an OpContext.
// File ops live in runner/files/, shell in runner/exec/, fetch_url in runner/net/; they are
// composed in runner/extensions.ts (exec/net) and runner/files/index.ts (files).
import type { Socket } from "node:net";
import type { z } from "zod";
import type { RunnerSandbox, RunnerToServer, ServerToRunner } from "../server/protocol/runner";
import type { ProcNamespace } from "./exec/procfs";
import type { Workspace } from "./workspace/workspace";

export interface OpResult {
  ok: boolean;
  output: string;
  meta?: Record<string, unknown>;
}

export interface OpContext {
  sessionId: string;
  workspace: Workspace;
  /** Aborted on cancel, on deadline, and when the runner shuts down. */
  signal: AbortSignal;
  /** Absolute deadline, ms since epoch (the signal also fires then). */
  deadline: number;
  /** Streams a chunk of output to the server as a `progress` frame. */
  progress(chunk: string): void;
  /**
   * The whole output for the server's spill, as `output` frames under flow control (see
   * runner/output-window.ts); absent when the server did not ask for it (no outputCeiling).
   */
  output?: { ceiling: number; write(bytes: Buffer): Promise<void> };
  /** Reports workspace-relative paths an op changed outside Workspace's own write helpers. */
  filesChanged(paths: string[]): void;
}

export interface Op<S extends z.ZodType = z.ZodType> {
  input: S;
  run(input: z.infer<S>, ctx: OpContext): Promise<OpResult>;
}

/** Keeps the input type of `run` tied to its schema. */
export function defineOp<S extends z.ZodType>(op: Op<S>): Op<S> {
  return op;
}

export type AnyOp = Op<any>;
export type OpTable = Record<string, AnyOp>;

export class OpRegistry {
  private readonly ops = new Map<string, AnyOp>();

  register(table: OpTable): void {
    for (const [name, op] of Object.entries(table)) {
      if (this.ops.has(name)) throw new Error(`runner op "${name}" registered twice`);
      this.ops.set(name, op);
    }
  }

  get(name: string): AnyOp | undefined {
    return this.ops.get(name);
  }

  names(): string[] {
    return [...this.ops.keys()].sort();
  }
}

export type PtyMessage = Extract<ServerToRunner, { type: `pty.${string}` }>;

/** What main.ts gives an extension: the workspace and a way to send frames to the server. */
export interface RunnerHost {
  workspace: Workspace;
  /** Sends a frame when connected; returns false (frame dropped) while disconnected. */
  send(message: RunnerToServer): boolean;
  /** Aborted when the runner shuts down. */
  signal: AbortSignal;
  /**
   * More folders this workspace's sandboxes must not see (a `--root` runner's root and its
   * default workspace: every other workspace); its own folder stays visible inside them.
   */
  hide?: string[];
}

/** main.ts forwards every pty.* frame here (runner/exec/pty.ts implements it). */
export interface PtyHandler {
  handle(message: PtyMessage): void;
  /** The server connection went away or came back: PTYs survive a short reconnect, not a long one. */
  connectionChanged(connected: boolean): void;
  dispose(): Promise<void> | void;
}

/** An add-on set of ops plus optional PTY handling and sandbox facts (exec, net). */
export interface RunnerExtension {
  ops?: OpTable;
  pty?: PtyHandler;
  /** Reported in hello; the first extension that sets it wins. */
  sandbox?: RunnerSandbox;
  /** The workspace's network namespace (runner/exec/netns.ts), which the preview reaches into. */
  network?: WorkspaceNamespace;
  /** Network namespaces of its sandboxes without network, where a server listens out of the preview's reach. */
  sandboxNamespaces?(): Promise<ProcNamespace[]>;
  dispose?(): Promise<void> | void;
}

/** A network namespace of the workspace's own: where its servers listen, unreachable from the host's loopback. */
export interface WorkspaceNamespace {
  /** A stream to `port` on the namespace's loopback; undefined when the namespace was never made. */
  connect(port: number): Promise<Socket | undefined>;
  /** Its `/proc/<pid>/net`, for the list of listening ports; undefined when it was never made. */
  procNet(): Promise<string | undefined>;
}
