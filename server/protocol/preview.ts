// The live preview's messages: the browser's HTTP requests and WebSockets forwarded by the
// server to a port on the runner's loopback, over the existing /runner socket (server/preview/,
// runner/preview/).
// A request names a port and a path, never a host: the runner connects to its own loopback only.
// Bodies travel as base64 chunks with credit-based flow control: a side sends at most
// PREVIEW_WINDOW bytes the other has not acknowledged, so a slow browser or a slow app never
// makes either process buffer a whole body.
import { z } from "zod";
import { WorkspaceId } from "./workspace-ops";

/** Bytes a sender may have in flight (sent, not yet acknowledged) per stream and direction. */
export const PREVIEW_WINDOW = 1024 * 1024;
/** Raw bytes per data frame (base64 makes it a third larger on the wire). */
export const PREVIEW_CHUNK = 64 * 1024;

/** Runner op (a plain `request`) that lists listening ports; input {}, output PreviewPorts JSON. */
export const PREVIEW_PORTS_OP = "preview_ports";

const streamId = z.string().min(1).max(200);
export const PreviewPort = z.number().int().min(1).max(65_535);
/** Origin-form only (`/a/b?c`): an absolute URL would turn a loopback HTTP proxy into a relay. */
export const PreviewPath = z
  .string()
  .min(1)
  .max(16 * 1024)
  .regex(/^\/[^\s]*$/, "path must start with / and contain no spaces");
const method = z
  .string()
  .regex(/^[A-Z][A-Z-]{0,31}$/)
  .refine((m) => m !== "CONNECT", "CONNECT is not forwarded");
/** Header list in wire order; a name may repeat (set-cookie). */
const headers = z.array(z.tuple([z.string().min(1).max(256), z.string().max(64 * 1024)])).max(500);
const base64 = z.string().max(Math.ceil((PREVIEW_CHUNK * 4) / 3) + 4);

/** Largest WebSocket message the preview relays (a dev server's hot-reload messages are small). */
export const PREVIEW_WS_MAX_MESSAGE = 1024 * 1024;
/** Text as is, binary as base64. */
const wsData = z.string().max(Math.ceil((PREVIEW_WS_MAX_MESSAGE * 4) / 3) + 4);
const wsClose = {
  code: z.number().int().min(1000).max(4999).optional(),
  reason: z.string().max(123).optional(),
};

export const PreviewServerFrame = z.discriminatedUnion("type", [
  z.object({
    type: z.literal("preview.request"),
    streamId,
    sessionId: z.string().min(1),
    /** Whose ports: the workspace's own network namespace only (absent: the default workspace). */
    workspaceId: WorkspaceId.optional(),
    port: PreviewPort,
    method,
    path: PreviewPath,
    headers,
    /** False for GET-like requests: the runner ends the upstream request at once. */
    hasBody: z.boolean(),
    /** Absolute deadline (ms since epoch) for the whole exchange. */
    deadline: z.number(),
  }),
  /** A chunk of the request body; `end` closes it (data may be empty). */
  z.object({ type: z.literal("preview.body"), streamId, data: base64, end: z.boolean() }),
  /** The browser consumed this many more response (or WebSocket message) bytes. */
  z.object({ type: z.literal("preview.ack"), streamId, bytes: z.number().int().positive() }),
  /** The browser went away or the deadline passed: drop the upstream request. */
  z.object({ type: z.literal("preview.cancel"), streamId }),
  /** A WebSocket upgrade on the preview host (hot reload): the runner opens one to the port. */
  z.object({
    type: z.literal("preview.ws.open"),
    streamId,
    sessionId: z.string().min(1),
    workspaceId: WorkspaceId.optional(),
    port: PreviewPort,
    path: PreviewPath,
    headers,
    protocols: z.array(z.string().min(1).max(256)).max(32),
    /** Absolute deadline for the handshake only; an open socket lives until either side closes. */
    deadline: z.number(),
  }),
  z.object({ type: z.literal("preview.ws.send"), streamId, data: wsData, binary: z.boolean() }),
  z.object({ type: z.literal("preview.ws.close"), streamId, ...wsClose }),
]);
export type PreviewServerFrame = z.infer<typeof PreviewServerFrame>;

export const PreviewErrorCode = z.enum(["refused", "timeout", "reset", "invalid", "cancelled", "busy"]);
export type PreviewErrorCode = z.infer<typeof PreviewErrorCode>;

export const PreviewRunnerFrame = z.discriminatedUnion("type", [
  z.object({ type: z.literal("preview.head"), streamId, status: z.number().int().min(100).max(999), headers }),
  z.object({ type: z.literal("preview.data"), streamId, data: base64 }),
  /** The response is complete, or failed (before the head: the server answers 502 or 504). */
  z.object({
    type: z.literal("preview.end"),
    streamId,
    error: z.object({ code: PreviewErrorCode, message: z.string() }).optional(),
  }),
  /** The runner wrote this many more request-body (or WebSocket message) bytes upstream. */
  z.object({ type: z.literal("preview.ack"), streamId, bytes: z.number().int().positive() }),
  /** The app accepted the WebSocket, with the subprotocol it chose. */
  z.object({ type: z.literal("preview.ws.opened"), streamId, protocol: z.string().max(256) }),
  z.object({ type: z.literal("preview.ws.message"), streamId, data: wsData, binary: z.boolean() }),
  /** The socket closed (`error` when it never opened, or broke). */
  z.object({
    type: z.literal("preview.ws.closed"),
    streamId,
    ...wsClose,
    error: z.object({ code: PreviewErrorCode, message: z.string() }).optional(),
  }),
]);
export type PreviewRunnerFrame = z.infer<typeof PreviewRunnerFrame>;

export const PreviewPortEntry = z.object({
  port: PreviewPort,
  /** The bound address as the kernel reports it: 127.0.0.1, 0.0.0.0, ::1, ::. */
  address: z.string(),
  /** A process of this workspace (the runner's descendants, or cwd inside the workspace) holds it. */
  workspace: z.boolean(),
  pid: z.number().int().optional(),
  command: z.string().optional(),
  /** Held by a workspace command sandboxed without network: it listens in a network of its own,
   *  which the preview cannot reach (a server for the preview needs network, or the terminal). */
  sandboxed: z.literal(true).optional(),
  /** Whose sandbox: a command's, or a terminal's that runs without network (QUIVER_PTY_NETWORK=0). */
  sandbox: z.enum(["command", "terminal"]).optional(),
});
export type PreviewPortEntry = z.infer<typeof PreviewPortEntry>;

export const PreviewPorts = z.object({ ports: z.array(PreviewPortEntry) });
export type PreviewPorts = z.infer<typeof PreviewPorts>;

/** Posted by a previewed page to the pane that frames it when its location changes (the script
 *  server/preview/inject.ts adds to pages the frame navigates to): the address bar follows. */
export const PREVIEW_LOCATION = "quiver.preview.location";
export const PreviewLocation = z.object({ type: z.literal(PREVIEW_LOCATION), path: PreviewPath });

/** Headers that describe one connection, not the message (RFC 9110 §7.6.1); never forwarded. */
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-authenticate",
  "proxy-authorization",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
]);

/** Drops hop-by-hop headers, including those the message's own Connection header names. */
export function endToEndHeaders(list: Array<[string, string]>): Array<[string, string]> {
  const named = new Set(HOP_BY_HOP);
  for (const [k, v] of list) {
    if (k.toLowerCase() === "connection") for (const t of v.split(",")) named.add(t.trim().toLowerCase());
  }
  return list.filter(([k]) => !named.has(k.toLowerCase()));
}

/** Node's rawHeaders (name, value, name, value…) as pairs. */
export function headerPairs(raw: readonly string[]): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (let i = 0; i + 1 < raw.length; i += 2) out.push([raw[i], raw[i + 1]]);
  return out;
}

// Where the browser loads a preview: http://<port>-<session>.<base>:<server port>/<path>, a
// host of its own per session and port (server/preview/http.ts says why). `base` is the IDE's
// host name, or `localhost` when the IDE is reached by IP (Chromium and Firefox resolve every
// *.localhost name to loopback).
const LABEL = /^(\d{1,5})-([a-z0-9]{1,63})$/;

export interface PreviewTarget {
  port: number;
  sessionId: string;
  /** The host name the preview label sits under (an allowed host of the server). */
  base: string;
}

/** Parses a Host header (name and optional port); undefined when it is not a preview host. */
export function parsePreviewHost(host: string | undefined): PreviewTarget | undefined {
  if (!host) return undefined;
  const name = host.toLowerCase().replace(/:\d+$/, "");
  const dot = name.indexOf(".");
  if (dot < 0) return undefined;
  const m = LABEL.exec(name.slice(0, dot));
  const base = name.slice(dot + 1);
  if (!m || !base) return undefined;
  const port = Number(m[1]);
  if (!PreviewPort.safeParse(port).success) return undefined;
  return { port, sessionId: m[2], base };
}

/** The preview origin for a port of a session, seen from a page at `ide` (its location). */
export function previewOrigin(
  ide: { protocol: string; hostname: string; port: string },
  sessionId: string,
  port: number,
): string {
  const byIp = /^[\d.]+$/.test(ide.hostname) || ide.hostname.includes(":") || ide.hostname.startsWith("[");
  const base = byIp ? "localhost" : ide.hostname;
  return `${ide.protocol}//${port}-${sessionId.toLowerCase()}.${base}${ide.port ? `:${ide.port}` : ""}`;
}
