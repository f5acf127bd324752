// Uploads on a real small tmpfs that fills up: with no room at all, or room for the archive but
// not for its record, the sender is told the disk is full (507), nothing of the refused upload is
// left or visible, the uploads stored before stay whole, and once room is made uploads work again.
import { randomBytes } from "node:crypto";
import { mkdirSync, openSync, readdirSync, rmSync, statfsSync, writeSync, closeSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Actor } from "./types";
import { createUploads } from "./uploads";
import { RunnerPool } from "../executors/runner-pool";
import { serveUploads, type UploadsDoor } from "../testing/uploads";
import { mountTmpfs, tmpfsRefusal } from "../testing/tmpfs";

const KB = 1024;
const alice: Actor = { userId: "alice", orgId: "org1", role: "member" };
const refusal = tmpfsRefusal();
let disk: Exclude<ReturnType<typeof mountTmpfs>, string>;
let door: UploadsDoor;
let pool: RunnerPool;
let base: string;
let uploadsDir: string;
const fill = () => join(disk.dir, "fill");

const archive = (n: number) => Buffer.concat([Buffer.from([0x1f, 0x8b]), randomBytes(n - 2)]);
const post = (body: Buffer) =>
  fetch(`${base}/api/uploads?name=a.tgz`, {
    method: "POST",
    body: new Uint8Array(body),
    headers: { "x-test-user": "alice" },
  });
const get = (id: string) => fetch(`${base}/api/uploads/${id}`, { headers: { authorization: "Bearer runner-secret" } });

/** Writes into the disk until only `leave` bytes are free (0: full). */
function fillDisk(leave: number): void {
  rmSync(fill(), { force: true });
  const fd = openSync(fill(), "w");
  try {
    const st = statfsSync(disk.dir);
    let want = st.bavail * st.bsize - leave;
    const chunk = Buffer.alloc(64 * KB, 1);
    while (want > 0) {
      try {
        want -= writeSync(fd, chunk, 0, Math.min(chunk.length, want));
      } catch {
        break;
      }
    }
  } finally {
    closeSync(fd);
  }
}

beforeAll(async () => {
  if (refusal) return;
  const m = mountTmpfs("2m");
  if (typeof m === "string") throw new Error(m);
  disk = m;
  const dataDir = join(disk.dir, "data");
  mkdirSync(dataDir);
  uploadsDir = join(dataDir, "uploads");
  pool = new RunnerPool({ tokens: ["runner-secret"] });
  door = await serveUploads(createUploads({ dataDir, maxBytes: 256 * KB }), pool, { alice });
  base = door.base;
});
afterAll(async () => {
  if (refusal) return;
  await door.close();
  await pool.dispose();
  disk.unmount();
});

describe.skipIf(refusal)("uploads on a full disk", () => {
  let kept: { id: string; bytes: Buffer };

  it("stores one first (what must survive)", async () => {
    const bytes = archive(64 * KB);
    const r = await post(bytes);
    expect(r.status).toBe(201);
    kept = { id: ((await r.json()) as { uploadId: string }).uploadId, bytes };
  });

  for (const [what, leave] of [
    ["no room at all", 0],
    ["room for the archive but not its record", 40 * KB],
  ] as const) {
    it(`${what}: 507 saying the disk is full, nothing of it left, the earlier upload whole`, async () => {
      fillDisk(leave);
      const r = await post(archive(40 * KB));
      const body = (await r.json()) as { error: string };
      expect({ status: r.status, error: body.error }).toEqual({
        status: 507,
        error: "the server's disk is full; the upload was not kept",
      });
      expect(readdirSync(uploadsDir).sort()).toEqual([`${kept.id}.bin`, `${kept.id}.json`]);
      const back = await get(kept.id);
      expect(back.status).toBe(200);
      expect(Buffer.from(await back.arrayBuffer()).equals(kept.bytes)).toBe(true);
    });
  }

  it("works again once there is room, the refused uploads not counted against the person", async () => {
    rmSync(fill(), { force: true });
    const r = await post(archive(100 * KB));
    expect(r.status).toBe(201);
  });
});
