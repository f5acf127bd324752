// The runner's preview support, composed for main.ts: the preview_ports op (a plain request
// with a deadline), and the handler of preview.* frames, which gives HTTP streams to the proxy
// and WebSocket streams to the socket relay, both opening ports in the workspace's network
// namespace first (runner/exec/netns.ts: the runner itself is not in it). The Quiver server's
// own port is left out of the host's list when the server runs on this machine (it is not the
// person's app).
import { z } from "zod";
import { defineOp, type OpTable, type WorkspaceNamespace } from "../ops";
import {
  PREVIEW_PORTS_OP,
  type PreviewRunnerFrame,
  type PreviewPorts,
  type PreviewServerFrame,
} from "../../server/protocol/preview";
import type { ProcNamespace } from "../exec/procfs";
import { logFn } from "../log";
import { listPorts } from "./ports";
import { PortOrigins } from "./port-origins";
import { connectLoopback, PreviewProxy, type PortConnector } from "./proxy";
import { PreviewSockets } from "./sockets";

export { PreviewProxy } from "./proxy";

export interface PreviewHandler {
  handle(frame: PreviewServerFrame): void;
  connectionLost(): void;
}

/**
 * Opens a port for the preview: in the workspace's network namespace when one was made (its
 * terminals' and commands' servers are there), else, or when nothing listens there, on this
 * machine's loopback (a server started outside the sandbox). Each origin (a session's port)
 * stays with the side that first answered it (port-origins.ts says why).
 */
export function portConnector(
  namespace?: WorkspaceNamespace,
  confined = false,
  origins: PortOrigins = new PortOrigins(),
): PortConnector {
  if (confined) return confinedConnector(namespace);
  if (!namespace) return connectLoopback;
  return async (port, sessionId) => {
    const side = origins.sideOf(sessionId, port);
    if (side !== "machine") {
      const socket = await namespace.connect(port).catch((err: NodeJS.ErrnoException) => {
        if (err.code === "ECONNREFUSED") return undefined;
        throw err;
      });
      if (socket) {
        origins.bind(sessionId, port, "workspace");
        return socket;
      }
    }
    if (side === "workspace")
      throw refused(
        `nothing listens on port ${port} in the workspace now; a server of the workspace answered this preview before, so it never reaches the machine's port ${port}`,
      );
    const socket = await connectLoopback(port).catch((err: NodeJS.ErrnoException) => {
      if (side === "machine" && err.code === "ECONNREFUSED")
        throw refused(
          `nothing listens on port ${port} on the runner's machine now; a server there answered this preview first, so a server of the workspace on port ${port} is not shown on it (preview another port)`,
        );
      throw err;
    });
    origins.bind(sessionId, port, "machine");
    return socket;
  };
}

/** A refusal on purpose: `reason` is what the person reads (proxy.ts refusedMessage). */
const refused = (reason: string) => Object.assign(new Error(reason), { code: "ECONNREFUSED", reason });

/**
 * A workspace of a `--root` runner reaches only its own namespace: never the host's loopback,
 * where another workspace's server (run unsandboxed or on the host network) could listen.
 */
function confinedConnector(namespace?: WorkspaceNamespace): PortConnector {
  return async (port) => {
    const socket = await namespace?.connect(port);
    if (socket) return socket;
    throw refused(`nothing of this workspace listens on port ${port} (its network namespace was never made)`);
  };
}

export function previewHandler(
  send: (frame: PreviewRunnerFrame) => boolean,
  namespace?: WorkspaceNamespace,
  confined = false,
  origins?: PortOrigins,
): PreviewHandler {
  const connect = portConnector(namespace, confined, origins);
  const proxy = new PreviewProxy({ send, connect });
  const sockets = new PreviewSockets(send, connect);
  return {
    handle(frame) {
      if (frame.type.startsWith("preview.ws.")) sockets.handle(frame as Parameters<PreviewSockets["handle"]>[0]);
      else if (frame.type === "preview.ack" && sockets.has(frame.streamId)) sockets.ack(frame.streamId, frame.bytes);
      else proxy.handle(frame as Parameters<PreviewProxy["handle"]>[0]);
    },
    connectionLost() {
      proxy.connectionLost();
      sockets.connectionLost();
    },
  };
}

/** The server's port when its URL names this machine, else nothing to exclude. */
export function localServerPort(serverUrl: string): number | undefined {
  try {
    const u = new URL(serverUrl);
    const host = u.hostname.replace(/^\[|\]$/g, "");
    if (!["localhost", "127.0.0.1", "::1", "0.0.0.0"].includes(host) && !host.startsWith("127.")) return undefined;
    return Number(u.port || (u.protocol === "wss:" ? 443 : 80));
  } catch {
    return undefined;
  }
}

export function previewSupport(o: {
  serverUrl: string;
  send(frame: PreviewRunnerFrame): boolean;
  network?: WorkspaceNamespace;
  /** Only the workspace's own namespace, never the host's loopback (a `--root` runner's workspaces). */
  confined?: boolean;
  /** The network namespaces of the workspace's sandboxes without network (runner/exec/warm.ts). */
  sandboxes?: () => Promise<ProcNamespace[]>;
  /** Where the sides of its preview origins are kept (port-origins.ts); absent: in memory. */
  originsFile?: string;
}): { ops: OpTable; handler: PreviewHandler } {
  const exclude = [localServerPort(o.serverUrl)].filter((p): p is number => p !== undefined);
  const ops: OpTable = {
    [PREVIEW_PORTS_OP]: defineOp({
      input: z.object({}).strict(),
      run: async (_input, ctx) => {
        const namespace = await o.network?.procNet();
        const result: PreviewPorts = {
          ports: await listPorts({
            workspace: ctx.workspace.root,
            exclude,
            namespace,
            hostPorts: !o.confined,
            sandboxes: (await o.sandboxes?.()) ?? [],
          }),
        };
        return { ok: true, output: JSON.stringify(result) };
      },
    }),
  };
  const origins = o.confined ? undefined : new PortOrigins(o.originsFile, logFn("preview"));
  return { ops, handler: previewHandler(o.send, o.network, o.confined, origins) };
}
