// Archive uploads over real HTTP into a real data folder: stored under an id and fetched back
// byte-exact by a runner's token; past the ceiling, not an archive, or from nobody: refused and
// nothing kept; a .part left by a killed upload is removed at the next start.
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeTarGz } from "../../runner/workspace/archive-fixtures";
import type { Actor } from "./types";
import { createUploads, type Uploads } from "./uploads";
import { RunnerPool } from "../executors/runner-pool";
import { serveUploads, type UploadsDoor } from "../testing/uploads";

const alice: Actor = { userId: "alice", orgId: "org1", role: "owner" };
let dataDir: string;
let door: UploadsDoor;
let base: string;
let uploads: Uploads;
let pool: RunnerPool;

beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "quiver-uploads-"));
  uploads = createUploads({ dataDir, maxBytes: 64 * 1024 });
  pool = new RunnerPool({ tokens: ["runner-secret"], throttle: { freeFailures: 3, baseLockMs: 60_000 } });
  door = await serveUploads(uploads, pool, { alice });
  base = door.base;
});
afterEach(async () => {
  await door.close();
  await pool.dispose();
  await rm(dataDir, { recursive: true, force: true });
});

const post = (body: Buffer, user = "alice", name = "project.tar.gz") =>
  fetch(`${base}/api/uploads?name=${encodeURIComponent(name)}`, {
    method: "POST",
    body: new Uint8Array(body),
    headers: user ? { "x-test-user": user } : {},
  });
const stored = () => readdir(join(dataDir, "uploads"));

describe("uploads", () => {
  it("stores an archive under an id; a runner's token fetches it back byte-exact; nobody else", async () => {
    const archive = makeTarGz([{ name: "src/a.txt", data: "hello" }]);
    const res = await post(archive, "alice", "../../etc/my project.tgz");
    expect(res.status).toBe(201);
    const body = (await res.json()) as { uploadId: string; name: string; bytes: number; format: string };
    expect(body).toMatchObject({ name: "my project.tgz", bytes: archive.length, format: "tar.gz" });
    expect(body.uploadId).toMatch(/^u-[0-9a-f]{24}$/);
    const got = await fetch(`${base}/api/uploads/${body.uploadId}`, {
      headers: { authorization: "Bearer runner-secret" },
    });
    expect(got.status).toBe(200);
    expect(Buffer.from(await got.arrayBuffer())).toEqual(archive);
    expect((await fetch(`${base}/api/uploads/${body.uploadId}`)).status).toBe(401);
    expect(
      (await fetch(`${base}/api/uploads/${body.uploadId}`, { headers: { authorization: "Bearer wrong" } })).status,
    ).toBe(401);
    expect(
      (
        await fetch(`${base}/api/uploads/u-000000000000000000000000`, {
          headers: { authorization: "Bearer runner-secret" },
        })
      ).status,
    ).toBe(404);
    expect(
      (await fetch(`${base}/api/uploads/..%2f..%2fetc`, { headers: { authorization: "Bearer runner-secret" } })).status,
    ).toBe(404);
    await expect(uploads.claim(body.uploadId, alice)).resolves.toMatchObject({ id: body.uploadId });
    await expect(uploads.claim(body.uploadId, { ...alice, userId: "bob" })).rejects.toThrow(/someone else's/);
  });

  it("counts wrong runner tokens against the address's budget on /runner: past it, even the right one waits", async () => {
    const archive = makeTarGz([{ name: "a.txt", data: "x" }]);
    const { uploadId } = (await (await post(archive)).json()) as { uploadId: string };
    const fetchWith = (token: string) =>
      fetch(`${base}/api/uploads/${uploadId}`, { headers: { authorization: `Bearer ${token}` } });
    for (const guess of ["a", "b", "c"]) expect((await fetchWith(guess)).status).toBe(401);
    const locked = await fetchWith("d");
    expect(locked.status).toBe(401);
    const refused = await fetchWith("runner-secret");
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    // One budget: the runner's own door from this address is locked out as well.
    const admission = pool.admitToken({
      socket: { remoteAddress: "127.0.0.1" },
      headers: { authorization: "Bearer runner-secret" },
    } as never);
    expect(admission).toMatchObject({ ok: false, status: 429 });
  });

  it("refuses past the ceiling, what is not an archive, and an unknown sender; keeps nothing", async () => {
    const big = gzipSync(Buffer.from(Array.from({ length: 400_000 }, () => Math.floor(Math.random() * 256))));
    const over = await post(big);
    expect(over.status).toBe(413);
    expect(((await over.json()) as { error: string }).error).toMatch(
      /^the archive is \d+ KB; uploads are limited to 64 KB$/,
    );
    // Without a length announced, the body is counted as it streams and cut at the ceiling.
    const chunks = [big.subarray(0, 50_000), big.subarray(50_000)];
    const streamed = await fetch(`${base}/api/uploads?name=x.tgz`, {
      method: "POST",
      headers: { "x-test-user": "alice" },
      duplex: "half",
      body: new ReadableStream({ pull: (c) => (chunks.length ? c.enqueue(chunks.shift()!) : c.close()) }),
    } as RequestInit);
    expect(streamed.status).toBe(413);
    expect(((await streamed.json()) as { error: string }).error).toBe(
      "the archive is larger than 64 KB, the ceiling for uploads",
    );
    const text = await post(Buffer.from("not an archive at all"));
    expect(text.status).toBe(415);
    expect(((await text.json()) as { error: string }).error).toBe(
      "the upload is not a .zip, .tar.gz, .tgz or .tar archive",
    );
    expect((await post(makeTarGz([{ name: "a", data: "1" }]), "")).status).toBe(401);
    expect(await stored()).toEqual([]);
  });

  it("a .part left by a killed upload is removed at the next start", async () => {
    await writeFile(join(dataDir, "uploads", "u-0123456789abcdef01234567.part"), "half");
    createUploads({ dataDir });
    expect(await stored()).toEqual([]);
  });
});
