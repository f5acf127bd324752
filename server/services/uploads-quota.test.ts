// The per-person upload quota over real HTTP into a real data folder (64 KB ceiling, so 128 KB a
// person, and 4 uploads): past it 429 with what to do and a Retry-After, nothing of the refused
// body kept; parallel uploads cannot race past it, whether their length is declared or streamed;
// another person is unaffected; and it frees as the person's older uploads expire.
import { randomBytes } from "node:crypto";
import { mkdtemp, readdir, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Actor } from "./types";
import { createUploads, type Uploads } from "./uploads";
import { RunnerPool } from "../executors/runner-pool";
import { serveUploads, type UploadsDoor } from "../testing/uploads";
import { waitFor } from "../testing/runner";

const KB = 1024;
const people: Record<string, Actor> = {
  alice: { userId: "alice", orgId: "org1", role: "member" },
  bob: { userId: "bob", orgId: "org1", role: "member" },
};
let dataDir: string;
let door: UploadsDoor | undefined;
let base: string;
let pool: RunnerPool;
/** Added to the clock the uploads see: a day later, the older uploads have expired. */
let clockAhead = 0;
let store: Uploads;

/** Starts (or restarts, as a new process would) the uploads and their HTTP door on `dataDir`. */
async function start(): Promise<void> {
  await door?.close();
  const uploads = createUploads({ dataDir, maxBytes: 64 * KB, quotaCount: 4, now: () => Date.now() + clockAhead });
  store = uploads;
  door = await serveUploads(uploads, pool, people);
  base = door.base;
}

beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "quiver-uploads-quota-"));
  pool = new RunnerPool({ tokens: ["runner-secret"] });
  clockAhead = 0;
  await start();
});
afterEach(async () => {
  await door!.close();
  door = undefined;
  await pool.dispose();
  await rm(dataDir, { recursive: true, force: true });
});

/** A "tar.gz" of exactly `n` bytes (its first bytes are all the server checks). */
const archive = (n: number) => Buffer.concat([Buffer.from([0x1f, 0x8b]), randomBytes(n - 2)]);

const post = (body: Buffer, user = "alice") =>
  fetch(`${base}/api/uploads?name=p.tgz`, {
    method: "POST",
    body: new Uint8Array(body),
    headers: { "x-test-user": user },
  });

/** A body without a length: `parts[0]` is sent at once, the rest once `release()` is called. */
function streamed(parts: Buffer[], user = "alice") {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let i = 0;
  const res = fetch(`${base}/api/uploads?name=s.tgz`, {
    method: "POST",
    headers: { "x-test-user": user },
    duplex: "half",
    body: new ReadableStream({
      async pull(c) {
        if (i === 1) await gate;
        if (i < parts.length) c.enqueue(new Uint8Array(parts[i++]));
        else c.close();
      },
    }),
  } as RequestInit);
  return { res, release };
}

const files = async () => (await readdir(join(dataDir, "uploads"))).sort();
const kept = async () => (await files()).filter((f) => f.endsWith(".bin")).length;
/** Bytes of the uploads still arriving (their `.part` files). */
async function arriving(): Promise<number> {
  let n = 0;
  for (const f of await files()) if (f.endsWith(".part")) n += (await stat(join(dataDir, "uploads", f))).size;
  return n;
}
const errorOf = async (res: Response) => ((await res.json()) as { error: string }).error;
const WHAT_TO_DO =
  /\. Wait for your older uploads to expire \(each is kept for a day(, so room frees in about \d+ (h|min))?\), make projects from the archives you have already uploaded, or delete projects made from archives you no longer need \(a project keeps its archive\)$/;

describe("the per-person upload quota", () => {
  it("refuses past a person's bytes with 429 saying what to do, keeps nothing of it, and leaves others alone", async () => {
    expect((await post(archive(50 * KB))).status).toBe(201);
    expect((await post(archive(50 * KB))).status).toBe(201);
    const before = await files();
    const over = await post(archive(50 * KB));
    expect(over.status).toBe(429);
    const error = await errorOf(over);
    expect(error).toMatch(
      /^this archive \(50 KB\) and the uploads you already have on the server \(100 KB\) pass the 128 KB one person may keep\. /,
    );
    expect(error).toMatch(WHAT_TO_DO);
    expect(error).toContain("room frees in about 24 h");
    expect(Number(over.headers.get("retry-after"))).toBeGreaterThan(86_000);
    expect(Number(over.headers.get("retry-after"))).toBeLessThanOrEqual(86_400);
    expect(await files()).toEqual(before);
    // What still fits is taken; another person has a quota of their own.
    expect((await post(archive(20 * KB))).status).toBe(201);
    expect((await post(archive(60 * KB), "bob")).status).toBe(201);
    expect((await post(archive(60 * KB), "bob")).status).toBe(201);
    expect(await kept()).toBe(5);
    // A restarted server counts what is on disk.
    await start();
    expect((await post(archive(10 * KB))).status).toBe(429);
    expect((await post(archive(8 * KB))).status).toBe(201);
  });

  it("refuses past the count of uploads a person may keep, and frees as the older ones expire", async () => {
    for (let i = 0; i < 4; i++) expect((await post(archive(KB))).status).toBe(201);
    const over = await post(archive(KB));
    expect(over.status).toBe(429);
    const error = await errorOf(over);
    expect(error).toMatch(/^you already have 4 uploads kept on the server, the most one person may keep\. /);
    expect(error).toMatch(WHAT_TO_DO);
    expect((await post(archive(KB), "bob")).status).toBe(201);
    expect(await kept()).toBe(5);
    // A day later (the server was up all along) her four are removed and she has room again.
    clockAhead = 24 * 3600_000 + 60_000;
    expect((await post(archive(KB))).status).toBe(201);
    expect(await kept()).toBe(2);
  });

  it("an upload a project keeps outlives its day, across restarts, still counted; released, it goes once past its day", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push(((await (await post(archive(KB))).json()) as { uploadId: string }).uploadId);
    await store.keep(ids[0]);
    await store.keep(ids[1]);
    expect(store.kept().sort()).toEqual([ids[0], ids[1]].sort());
    // Kept ones never free room by waiting: the answer says a project holds them.
    const over = await errorOf(await post(archive(KB)));
    expect(over).toMatch(/delete projects made from archives you no longer need/);
    clockAhead = 24 * 3600_000 + 60_000;
    await start(); // a restart's sweep
    expect(await kept()).toBe(2);
    expect(await store.meta(ids[0])).toMatchObject({ id: ids[0] });
    expect(await store.meta(ids[2])).toBeNull();
    // Still counted: the two kept and two new are her four.
    clockAhead = 0;
    expect((await post(archive(KB))).status).toBe(201);
    expect((await post(archive(KB))).status).toBe(201);
    expect((await post(archive(KB))).status).toBe(429);
    // Its project is deleted: an archive still in its day stays for it; one past its day goes.
    await store.release(ids[1]);
    expect(await store.meta(ids[1])).toMatchObject({ id: ids[1] });
    clockAhead = 24 * 3600_000 + 60_000;
    await store.release(ids[0]);
    expect(await store.meta(ids[0])).toBeNull();
    expect(store.kept()).toEqual([]);
    await expect(store.keep(ids[0])).rejects.toThrow(/no such upload/);
  });

  it("parallel uploads with a declared length cannot all pass: the length is reserved before any is read", async () => {
    const answers = await Promise.all([1, 2, 3].map(() => post(archive(50 * KB))));
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses).toEqual([201, 201, 429]);
    await Promise.all(answers.map((r) => r.body?.cancel()));
    expect(await kept()).toBe(2);
    expect((await files()).filter((f) => !f.endsWith(".bin") && !f.endsWith(".json"))).toEqual([]);
  });

  it("parallel uploads without a length are counted as they arrive: the one that passes is cut, nothing of it kept", async () => {
    // Each half is 25 KB: three halves (75 KB) fit the 128 KB, three whole archives (150 KB) do not.
    const uploads = [1, 2, 3].map(() => {
      const a = archive(50 * KB);
      return streamed([a.subarray(0, 25 * KB), a.subarray(25 * KB)]);
    });
    await waitFor(async () => (await arriving()) === 75 * KB, 10_000, "the first halves on disk");
    for (const u of uploads) u.release();
    const answers = await Promise.all(uploads.map((u) => u.res));
    expect(answers.map((r) => r.status).sort()).toEqual([201, 201, 429]);
    const refused = answers.find((r) => r.status === 429)!;
    expect(await errorOf(refused)).toMatch(
      /^this archive \(\d+ KB so far\) and your other uploads on the server \(\d+ KB\) pass the 128 KB one person may keep\. /,
    );
    await Promise.all(answers.filter((r) => r !== refused).map((r) => r.body?.cancel()));
    expect(await kept()).toBe(2);
    expect((await files()).filter((f) => f.endsWith(".part"))).toEqual([]);
  });

  it("an upload still arriving counts: a declared one that would pass with it is refused at once", async () => {
    expect((await post(archive(20 * KB))).status).toBe(201);
    const a = archive(60 * KB);
    const slow = streamed([a.subarray(0, 60 * KB - 100), a.subarray(60 * KB - 100)]);
    await waitFor(async () => (await arriving()) === 60 * KB - 100, 10_000, "the slow upload on disk");
    const over = await post(archive(50 * KB));
    expect(over.status).toBe(429);
    expect(await errorOf(over)).toMatch(/\(50 KB\) and the uploads you already have on the server \(80 KB\) pass/);
    expect((await post(archive(60 * KB), "bob")).status).toBe(201);
    slow.release();
    expect((await slow.res).status).toBe(201);
    expect(await kept()).toBe(3);
  });
});
