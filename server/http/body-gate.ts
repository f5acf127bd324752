// Who may send /api/trpc a body, decided before it is read. tRPC's HTTP adapter starts reading a
// POST's body at once and buffers it (up to CALL_BODY_MAX) before any procedure or identity is
// looked at, so a stranger holding 63 MiB bodies open on many connections made the server hold
// 64 MiB each: 20 connections took it from 291 MiB to 1.3 GB. A body over a few KiB, or of no
// stated length, is refused unread and its connection closed when it comes from someone who may
// call no procedure with a body (nobody signed in, an ended link, a person of no
// org; every public procedure is a GET). A small one still reaches tRPC, which answers it in its
// own shape (UNAUTHORIZED), as the IDE's client expects of a signed-out page. And a person's (or a
// share link's) bodies being read at once hold at most `perCallerBytes` together, counted by
// their stated length (the bound for one of no stated length): past it, 429 and closed.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Identity } from "../auth";
import { requestAddress } from "./address-key";
import { callerKey } from "./caller-key";

const MAY_SEND_BODY: ReadonlySet<Identity["kind"]> = new Set(["owner", "viewer"]);
/** What a caller who may send no body is let send tRPC, to be told so in tRPC's own words. */
export const STRANGER_BODY_MAX = 64 * 1024;

/** Far above what a person's tabs send at once: a few saves of large files. */
export const PER_CALLER_BODY_BYTES = 256 * 1024 * 1024;

export function createBodyGate(deps: {
  identify(req: IncomingMessage): Promise<Identity>;
  maxBytes: number;
  perCallerBytes?: number;
}) {
  const perCaller = deps.perCallerBytes ?? PER_CALLER_BODY_BYTES;
  const reading = new Map<string, number>();
  const refuse = (req: IncomingMessage, res: ServerResponse, status: number, error: string) => {
    res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store", connection: "close" });
    // Not read, so not drained either: the connection goes with the answer.
    res.end(JSON.stringify({ error }), () => req.destroy());
  };
  /** Calls `next` when `req` may go on to be read; otherwise answers it. */
  return async (req: IncomingMessage, res: ServerResponse, next: () => void): Promise<void> => {
    const method = (req.method ?? "GET").toUpperCase();
    if (method === "GET" || method === "HEAD") return next();
    // Over maxBytes, tRPC refuses it unread itself (413), after what it may refuse first: a share
    // link's mutation (403), a query posted (405).
    const declared = Number(req.headers["content-length"] ?? NaN);
    let id: Identity;
    try {
      id = await deps.identify(req);
    } catch {
      return refuse(req, res, 503, "who is asking could not be checked; try again");
    }
    if (!MAY_SEND_BODY.has(id.kind) && !(declared <= STRANGER_BODY_MAX))
      return refuse(req, res, 401, "sign in first: this call needs a signed-in person");
    const key = callerKey(id, requestAddress(req));
    const bytes = declared >= 0 ? Math.min(declared, deps.maxBytes) : deps.maxBytes;
    const held = reading.get(key) ?? 0;
    if (held + bytes > perCaller)
      return refuse(req, res, 429, `too many large requests at once: ${held} bytes of yours are being read already`);
    reading.set(key, held + bytes);
    let done = false;
    const release = () => {
      if (done) return;
      done = true;
      const left = (reading.get(key) ?? bytes) - bytes;
      if (left > 0) reading.set(key, left);
      else reading.delete(key);
    };
    // Until the answer is sent or the connection goes (the body is read by then).
    res.once("close", release);
    next();
  };
}
