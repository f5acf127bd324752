// One workspace as the runner serves it: its folder (Workspace: file ops from its directory
// descriptor, its watcher), its own ops registry (file ops, and the exec extension's shell,
// whose warm sandboxes and spools are this workspace's), its terminals, its network namespace
// and its preview. A plain runner serves one; a `--root` runner one per workspace id
// (runner/root/workspaces.ts), each confined to its own folder and namespace.
import type { RunnerSandbox, RunnerToServer } from "../server/protocol/runner";
import { loadExtensions } from "./extensions";
import { logFn } from "./log";
import { fileOps } from "./files";
import { OpRegistry, type PtyHandler, type RunnerExtension } from "./ops";
import { previewSupport, type PreviewHandler } from "./preview";
import type { DiskLimit } from "./workspace/disk-limit";
import { sweepInBackground } from "./workspace/leftovers";
import { recoverRestore } from "./checkpoints/recover";
import { withDiskNotice } from "./workspace/disk-limit-ops";
import { TypeScriptServer } from "./lsp/server";
import { ideDiagnosticsOp, withEditDiagnostics } from "./lsp/diagnostics";
import type { Workspace } from "./workspace/workspace";

/** How long serving a workspace waits for its watcher to listen. */
const WATCHER_READY_MS = 15_000;

export interface Served {
  workspace: Workspace;
  registry: OpRegistry;
  pty?: PtyHandler;
  preview: PreviewHandler;
  sandbox: RunnerSandbox;
  /** Kills its commands, terminals and namespace, stops its watcher and closes its folder. */
  dispose(): Promise<void>;
}

export interface ServeOptions {
  serverUrl: string;
  send(message: RunnerToServer): boolean;
  /** Aborted when the runner shuts down. */
  signal: AbortSignal;
  /** Folders its sandboxes must not see besides the configured ones (the other workspaces). */
  hide?: string[];
  /** Its preview reaches only its own namespace, never the host's loopback. */
  confined?: boolean;
  /** Its disk limit: file ops past it are refused, a command that ends past it is told so. */
  diskLimit?: () => DiskLimit | undefined;
  /** Where an unconfined preview keeps which side answered each origin (preview/port-origins.ts). */
  previewOrigins?: string;
}

export async function serve(workspace: Workspace, o: ServeOptions): Promise<Served> {
  // What a runner killed mid-write or mid-restore left here (leftovers.ts), beside start-up.
  const sweep = sweepInBackground(workspace.files, logFn("leftovers"));
  const registry = new OpRegistry();
  // Its language server starts on the first edit of a TS/JS file (runner/lsp), in its sandbox.
  const ts = new TypeScriptServer(workspace.root, workspace.helpers, {
    log: logFn("lsp"),
  });
  registry.register(withEditDiagnostics(fileOps, () => ts));
  registry.register(ideDiagnosticsOp(() => ts));
  let extensions: RunnerExtension[];
  try {
    extensions = await loadExtensions({ workspace, signal: o.signal, send: o.send, hide: o.hide });
  } catch (err) {
    sweep.stop();
    workspace.dispose();
    throw err;
  }
  const limitOf = o.diskLimit;
  if (limitOf) {
    const guard = {
      settle: async (bytes: number) => limitOf()?.settle(bytes),
      before: (bytes: number, input: string) => limitOf()?.guardFor(workspace.files).before(bytes, input),
      failed: (err: unknown) => limitOf()?.explain(err) ?? err,
    };
    workspace.files.writeGuard = guard;
  }
  // A checkpoint restore a runner killed midway left half done is rolled back before any request
  // here is served (requests wait for serve): with git in the sandbox the extensions just set up.
  // The extensions have said where the watcher runs (their sandbox, if any: workspace/watch.ts),
  // so a runner's workspace starts it only now, crawling its tree once. The workspace is served
  // once it listens, so what the person or a command changes from the first request on is
  // announced. A watcher that does not come up in time is waited for no longer.
  workspace.watchWhenServed();
  const listening = new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, WATCHER_READY_MS);
    void workspace.watching().finally(() => (clearTimeout(timer), resolve()));
  });
  await Promise.all([recoverRestore(workspace, logFn("checkpoints")), listening]);
  for (const ext of extensions) {
    if (!ext.ops) continue;
    registry.register(
      limitOf
        ? Object.fromEntries(
            Object.entries(ext.ops).map(([name, op]) => [name, name === "shell" ? withDiskNotice(op, limitOf) : op]),
          )
        : ext.ops,
    );
  }
  const network = extensions.find((e) => e.network)?.network;
  const preview = previewSupport({
    serverUrl: o.serverUrl,
    send: o.send,
    network,
    confined: o.confined,
    sandboxes: extensions.find((e) => e.sandboxNamespaces)?.sandboxNamespaces,
    originsFile: o.previewOrigins,
  });
  registry.register(preview.ops);
  const pty = extensions.find((e) => e.pty)?.pty;
  let disposed: Promise<void> | undefined;
  return {
    workspace,
    registry,
    pty,
    preview: preview.handler,
    sandbox: extensions.find((e) => e.sandbox)?.sandbox ?? { available: false, kind: "none" },
    dispose: () =>
      (disposed ??= (async () => {
        sweep.stop();
        // First: the exec extension's disposal waits for the helpers' cgroup, where the watch
        // server runs, to empty (up to 5 s) before removing it.
        workspace.stopWatching();
        preview.handler.connectionLost();
        await Promise.resolve(pty?.dispose()).catch(() => {});
        await ts.dispose().catch(() => {});
        for (const ext of extensions) await Promise.resolve(ext.dispose?.()).catch(() => {});
        workspace.dispose();
      })()),
  };
}
