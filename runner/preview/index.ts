// The runner's preview support, composed for main.ts: the preview_ports op (a plain request
// with a deadline), and the handler of preview.* frames, which gives HTTP streams to the proxy
// and WebSocket streams to the socket relay. The Quiver server's own port is left out of the
// list when the server runs on this machine (it is not the person's app).
import { z } from "zod";
import { defineOp, type OpTable } from "../ops";
import { PREVIEW_PORTS_OP, type PreviewRunnerFrame, type PreviewPorts, type PreviewServerFrame } from "../../server/protocol/preview";
import { listPorts } from "./ports";
import { PreviewProxy } from "./proxy";
import { PreviewSockets } from "./sockets";

export { PreviewProxy } from "./proxy";

export interface PreviewHandler {
  handle(frame: PreviewServerFrame): void;
  connectionLost(): void;
}

export function previewHandler(send: (frame: PreviewRunnerFrame) => boolean): PreviewHandler {
  const proxy = new PreviewProxy({ send });
  const sockets = new PreviewSockets(send);
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

export function previewSupport(o: { serverUrl: string; send(frame: PreviewRunnerFrame): boolean }): { ops: OpTable; handler: PreviewHandler } {
  const exclude = [localServerPort(o.serverUrl)].filter((p): p is number => p !== undefined);
  const ops: OpTable = {
    [PREVIEW_PORTS_OP]: defineOp({
      input: z.object({}).strict(),
      run: async (_input, ctx) => {
        const result: PreviewPorts = { ports: await listPorts({ workspace: ctx.workspace.root, exclude }) };
        return { ok: true, output: JSON.stringify(result) };
      },
    }),
  };
  return { ops, handler: previewHandler(o.send) };
}
