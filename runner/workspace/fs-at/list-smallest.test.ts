// A folder's first names, streamed: a real folder of 20,000 files made in a shuffled order; the
// listing keeps the first k by name and says there are more, reads its .gitignore on the same
// walk, and answers null for a folder that is not there.
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { WorkspaceFs } from "./index";

const root = mkdtempSync(join(tmpdir(), "quiver-list-smallest-"));
const names = Array.from({ length: 20_000 }, (_, i) => `f${String(i).padStart(5, "0")}`);
mkdirSync(join(root, "many"));
for (let i = 0; i < names.length; i++) writeFileSync(join(root, "many", names[(i * 7919) % names.length]), "");
writeFileSync(join(root, "many", ".gitignore"), "f0*\n");
const files = WorkspaceFs.open(root);
afterAll(() => {
  files.close();
  rmSync(root, { recursive: true, force: true });
});

describe("listSmallest", () => {
  it("keeps the first names of a large folder in name order, and says there are more", async () => {
    const listed = await files.listSmallest("many", 101, ".gitignore");
    expect(listed!.entries.map((e) => e.name)).toEqual([".gitignore", ...names.slice(0, 100)]);
    expect(listed!.more).toBe(true);
    expect(listed!.file?.toString()).toBe("f0*\n");
  });

  it("reads a whole folder that fits, and nothing for one that is not there", async () => {
    const all = await files.listSmallest("many", 30_000);
    expect(all!.entries).toHaveLength(20_001);
    expect(all!.more).toBe(false);
    expect(all!.file).toBeNull();
    expect(await files.listSmallest("nowhere", 10)).toBeNull();
  });
});
