// Spills on a real small tmpfs holding the SQLite database, filled up: a spill that no longer
// fits fails with an error (whole or streamed), is never visible half-written, and the spills
// stored before stay whole and readable; once room is made, spills are stored again.
import { randomBytes } from "node:crypto";
import { closeSync, mkdirSync, openSync, rmSync, statfsSync, writeSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDb, type DbHandle } from "../db";
import { seedSession } from "../testing/pipeline";
import { mountTmpfs, tmpfsRefusal } from "../testing/tmpfs";
import { createSpillStore } from "./spills";

const refusal = tmpfsRefusal();
let disk: Exclude<ReturnType<typeof mountTmpfs>, string>;
let handle: DbHandle;
let url: string;
let store: ReturnType<typeof createSpillStore>;
let sessionId: string;
const fill = () => join(disk.dir, "fill");

/** Writes into the disk until it is full. */
function fillDisk(): void {
  const fd = openSync(fill(), "w");
  const chunk = Buffer.alloc(64 * 1024, 1);
  try {
    for (;;) writeSync(fd, chunk);
  } catch {
    /* full */
  } finally {
    closeSync(fd);
  }
  expect(statfsSync(disk.dir).bavail).toBe(0);
}

beforeAll(async () => {
  if (refusal) return;
  const m = mountTmpfs("24m");
  if (typeof m === "string") throw new Error(m);
  disk = m;
  mkdirSync(join(disk.dir, "data"));
  url = `file:${join(disk.dir, "data", "quiver.db")}`;
  handle = await openDb(url);
  store = createSpillStore(handle.db, url);
  sessionId = (await seedSession(handle.db)).session.id;
}, 60_000);
afterAll(async () => {
  if (refusal) return;
  await store?.close();
  await handle?.close();
  disk.unmount();
});

describe.skipIf(refusal)("spills on a full disk", () => {
  let kept: { ref: string; bytes: Buffer };

  it("fails a spill that does not fit, whole or streamed, and shows nothing of it", async () => {
    const bytes = randomBytes(256 * 1024);
    kept = { ref: (await store.store({ sessionId, bytes })).ref, bytes };
    const writer = await store.open({ sessionId }).catch((e: Error) => e);
    expect(writer).not.toBeInstanceOf(Error);
    if (!(writer instanceof Error)) await writer.append(randomBytes(1024 * 1024));
    fillDisk();
    const whole = await store.store({ sessionId, bytes: randomBytes(4 * 1024 * 1024) }).catch((e: Error) => e);
    expect(String(whole)).toMatch(/disk is full/);
    if (!(writer instanceof Error)) {
      let failed: unknown;
      try {
        for (let i = 0; i < 8; i++) await writer.append(randomBytes(1024 * 1024));
        await writer.finish();
      } catch (e) {
        failed = e;
        await writer.abort().catch(() => undefined);
      }
      expect(String(failed)).toMatch(/disk is full/);
      // Nothing of the half-written spill is readable.
      const rows = await handle.db.spill.findMany({ where: { sessionId }, select: { id: true, sha256: true } });
      for (const r of rows.filter((x) => x.id !== kept.ref)) expect(await store.bytes(r.id, sessionId)).toBeUndefined();
    }
    expect(Buffer.from((await store.bytes(kept.ref, sessionId))!).equals(kept.bytes)).toBe(true);
  }, 60_000);

  it("stores again once there is room, and the earlier spill is still whole", async () => {
    rmSync(fill(), { force: true });
    const bytes = randomBytes(1024 * 1024);
    const again = await store.store({ sessionId, bytes });
    expect(Buffer.from((await store.bytes(again.ref, sessionId))!).equals(bytes)).toBe(true);
    expect(Buffer.from((await store.bytes(kept.ref, sessionId))!).equals(kept.bytes)).toBe(true);
  }, 60_000);
});
