// The build lock: two servers starting together never build .next at once, and a lock left by a
// killed process does not block the next start.
import { describe, expect, it } from "vitest";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHash } from "node:crypto";
import { spawnSync } from "node:child_process";
import { lockBuild } from "./next-build";

const lockPath = (root: string) =>
  join(tmpdir(), `quiver-next-build-${createHash("sha256").update(root).digest("hex").slice(0, 16)}.lock`);

describe("next build lock", () => {
  it("lets one holder at a time in; the second waits for the release", async () => {
    const root = mkdtempSync(join(tmpdir(), "quiver-nb-"));
    const order: string[] = [];
    const release1 = await lockBuild(root, () => {});
    const second = lockBuild(root, (l) => order.push(l)).then((release) => (order.push("second in"), release));
    await new Promise((r) => setTimeout(r, 700));
    expect(order).toEqual(["another server is building the web app; waiting for it…"]);
    order.push("first out");
    release1();
    (await second)();
    expect(order.slice(1)).toEqual(["first out", "second in"]);
  });

  it("takes over a lock whose process is gone", async () => {
    const root = mkdtempSync(join(tmpdir(), "quiver-nb-"));
    const dead = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], {
      encoding: "utf8",
    }).stdout;
    writeFileSync(lockPath(root), dead);
    const release = await Promise.race([
      lockBuild(root, () => {}),
      new Promise<never>((_, no) => setTimeout(() => no(new Error("stale lock blocked")), 3000)),
    ]);
    release();
  });
});
