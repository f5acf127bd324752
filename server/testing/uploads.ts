// The uploads' HTTP door on 127.0.0.1 for tests (tests only): the real createUploadsHttp, runners
// admitted by the given pool's tokens, and the person named by an `x-test-user` header.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { RunnerPool } from "../executors/runner-pool";
import type { Actor } from "../services/types";
import type { Uploads } from "../services/uploads";
import { createUploadsHttp } from "../services/uploads-http";

export interface UploadsDoor {
  /** `http://127.0.0.1:PORT` */
  base: string;
  /** Closes the server, open connections included. */
  close(): Promise<void>;
}

export async function serveUploads(
  uploads: Uploads,
  pool: RunnerPool,
  people: Record<string, Actor>,
): Promise<UploadsDoor> {
  const http = createUploadsHttp({
    uploads,
    admitRunner: (req) => pool.admitToken(req),
    actorOf: async (req) => {
      const name = String(req.headers["x-test-user"]);
      return Object.hasOwn(people, name) ? people[name] : null;
    },
  });
  const server = createServer((req, res) => {
    if (!http.handle(req, res)) res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
