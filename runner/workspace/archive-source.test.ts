// The archive source end to end over real HTTP: an archive uploaded to the server's upload
// route is fetched by the runner's filler with its token and extracted into a staging folder;
// a hostile archive and an unknown upload are refused with the reason, leaving the folder empty.
import { closeSync, constants, openSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createUploads } from "../../server/services/uploads";
import { createUploadsHttp } from "../../server/services/uploads-http";
import { fillerFor } from "../root/sources";
import { makeTarGz } from "./archive-fixtures";
import { configureArchiveSource } from "./archive-source";

let dir: string;
let server: Server;
let port: number;
const alice = { userId: "alice", orgId: "org1", role: "owner" as const };
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "quiver-archive-source-"));
  const uploads = createUploads({ dataDir: join(dir, "data") });
  const http = createUploadsHttp({
    uploads,
    admitRunner: (req) =>
      req.headers.authorization === "Bearer tok"
        ? { ok: true, tokenIndex: 0 }
        : { ok: false, status: 401, error: "no" },
    actorOf: async () => alice,
  });
  server = createServer((req, res) => void (http.handle(req, res) || res.writeHead(404).end()));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  port = (server.address() as { port: number }).port;
  configureArchiveSource({ server: `ws://127.0.0.1:${port}/runner`, token: "tok" });
});
afterAll(async () => {
  await new Promise<void>((r) => server.close(() => r()));
  await rm(dir, { recursive: true, force: true });
});

async function upload(archive: Buffer): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${port}/api/uploads?name=p.tgz`, {
    method: "POST",
    body: new Uint8Array(archive),
  });
  return ((await res.json()) as { uploadId: string }).uploadId;
}

async function fill(uploadId: string, name: string): Promise<{ error?: string; files: string[]; path: string }> {
  const path = join(dir, name);
  await mkdir(path);
  const fd = openSync(path, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  const filler = (await fillerFor("archive"))!;
  try {
    await filler({
      workspaceId: "w1",
      source: { kind: "archive", uploadId },
      staging: { dirFd: fd, path },
      signal: new AbortController().signal,
      progress: () => {},
    });
    return { files: await readdir(path), path };
  } catch (err) {
    return { error: (err as Error).message, files: await readdir(path), path };
  } finally {
    closeSync(fd);
  }
}

it("fetches the upload with the runner's token and extracts it", async () => {
  const id = await upload(
    makeTarGz([
      { name: "src/main.ts", data: "export {};\n" },
      { name: "README.md", data: "# p\n" },
    ]),
  );
  const r = await fill(id, "ok");
  expect(r.error).toBeUndefined();
  expect(r.files.sort()).toEqual(["README.md", "src"]);
  expect(await readFile(join(r.path, "src/main.ts"), "utf8")).toBe("export {};\n");
});

it("refuses a hostile archive and an unknown upload, leaving the folder empty", async () => {
  const evil = await fill(
    await upload(
      makeTarGz([
        { name: "ok", data: "1" },
        { name: "../evil", data: "x" },
      ]),
    ),
    "evil",
  );
  expect(evil.error).toMatch(/^the archive was refused: entry "\.\.\/evil" has a "\.\." segment/);
  expect(evil.files).toEqual([]);
  const gone = await fill("u-000000000000000000000000", "gone");
  expect(gone.error).toMatch(/uploaded archive is gone/);
});
