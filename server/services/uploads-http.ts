// The HTTP side of uploads: `POST /api/uploads?name=<file name>` with the archive as the raw body
// (a person of an org; answers { uploadId, name, bytes, format }; 429 with Retry-After past the
// person's quota), and `GET /api/uploads/<id>` for a runner fetching it for workspace.create (its
// Bearer token, as on /runner). Plain HTTP, not tRPC: the body is streamed to disk, never held
// whole in memory or base64.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { TokenAdmission } from "../executors/runner-pool";
import type { Actor } from "./types";
import { UploadError, type Uploads } from "./uploads";

const reply = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" });
  res.end(JSON.stringify(body));
};

export function createUploadsHttp(deps: {
  uploads: Uploads;
  actorOf(req: IncomingMessage): Promise<Actor | null>;
  /** A runner's token, throttled per address with /runner's (RunnerPool.admitToken). */
  admitRunner(req: IncomingMessage): TokenAdmission;
}) {
  async function post(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const actor = await deps.actorOf(req);
    if (!actor) {
      req.resume();
      return reply(res, 401, { error: "sign in to upload an archive" });
    }
    const name = new URL(req.url ?? "/", "http://x").searchParams.get("name") ?? "archive";
    try {
      const m = await deps.uploads.receive(req, actor, name);
      reply(res, 201, { uploadId: m.id, name: m.name, bytes: m.bytes, format: m.format });
    } catch (err) {
      // Past the ceiling or the quota the rest of the body is not read: the connection is closed after the answer.
      if (err instanceof UploadError) {
        res.setHeader("connection", "close");
        if (err.retryAfterS) res.setHeader("retry-after", String(err.retryAfterS));
        return reply(res, err.status, { error: err.message });
      }
      reply(res, 500, { error: "the upload could not be stored" });
    }
  }

  async function get(req: IncomingMessage, res: ServerResponse, id: string): Promise<void> {
    const admitted = deps.admitRunner(req);
    if (!admitted.ok) {
      if (admitted.retryAfterS) res.setHeader("retry-after", String(admitted.retryAfterS));
      return reply(res, admitted.status, { error: admitted.error });
    }
    const found = await deps.uploads.read(id);
    if (!found) return reply(res, 404, { error: "no such upload (uploads are kept for a day)" });
    found.stream.once("error", () => (res.headersSent ? res.destroy() : reply(res, 404, { error: "no such upload" })));
    found.stream.once("open", () => {
      res.writeHead(200, {
        "content-type": "application/octet-stream",
        "content-length": String(found.meta.bytes),
        "cache-control": "no-store",
      });
      found.stream.pipe(res);
    });
  }

  return {
    /** Answers /api/uploads requests; false for any other path. */
    handle(req: IncomingMessage, res: ServerResponse): boolean {
      const path = (req.url ?? "/").split("?")[0];
      if (path === "/api/uploads") {
        if (req.method !== "POST") reply(res, 405, { error: "POST the archive as the body" });
        else void post(req, res);
        return true;
      }
      const m = /^\/api\/uploads\/([^/]+)$/.exec(path);
      if (!m) return false;
      if (req.method !== "GET") reply(res, 405, { error: "GET only" });
      else void get(req, res, decodeURIComponent(m[1]));
      return true;
    },
  };
}
