// /api/health on a real small disk (issue 24, item 2): a full disk makes the database refuse
// writes and the data folder run low, and health must say both with ok: false (it answered
// ok: true before); once space is back it says the database takes writes again.
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startQuiver, type Quiver } from "../app";
import { testServerEnv } from "../testing/env";
import { mountTmpfs, tmpfsRefusal } from "../testing/tmpfs";
import type { HealthReport } from "./health";

const root = join(import.meta.dirname, "../..");
const refusal = tmpfsRefusal();
if (refusal) console.warn(`health.test: SKIPPED: ${refusal}`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(refusal !== undefined)("/api/health on a tmpfs data folder", () => {
  let mount: Exclude<ReturnType<typeof mountTmpfs>, string>;
  let quiver: Quiver;
  const health = async () => {
    const res = await fetch(`${quiver.url}/api/health`);
    return { status: res.status, body: (await res.json()) as HealthReport };
  };

  beforeAll(async () => {
    mount = mountTmpfs("8m") as typeof mount;
    const env = testServerEnv(mount.dir, { QUIVER_MIN_FREE_DISK_MB: "2" });
    quiver = await startQuiver({ env, root, web: false, log: () => {} });
  });
  afterAll(async () => {
    rmSync(join(mount.dir, "fill"), { force: true });
    await quiver?.stop();
    mount.unmount();
  });

  it("reports a database that cannot be written and a data folder low on space, then their recovery", async () => {
    const before = await health();
    expect(before.status).toBe(200);
    expect(before.body.database).toMatchObject({ up: true, writable: true });
    expect(before.body.disk).toMatchObject({ path: mount.dir, low: false, minFreeMb: 2 });
    expect(before.body.problems).toEqual([]);

    try {
      writeFileSync(join(mount.dir, "fill"), Buffer.alloc(16 * 1024 * 1024));
    } catch {
      /* ENOSPC: the disk is full */
    }
    await sleep(5_100); // past the probe's cached answer
    const full = await health();
    expect(full.status).toBe(503);
    expect(full.body.ok).toBe(false);
    expect(full.body.database).toMatchObject({ up: true, writable: false });
    expect(full.body.disk).toMatchObject({ freeMb: 0, low: true });
    expect(full.body.problems.join("\n")).toContain(`the disk is full (${join(mount.dir, "quiver.db")})`);
    expect(full.body.problems.join("\n")).toContain(`Low disk space: 0 MB free in ${mount.dir}`);

    rmSync(join(mount.dir, "fill"));
    await sleep(5_100);
    const back = await health();
    expect(back.status).toBe(200);
    expect(back.body.database).toMatchObject({ writable: true });
    expect(back.body.problems).toEqual([]);
  }, 60_000);
});
