// ide_find on a real workspace through ripgrep: paths holding the query's characters in order,
// case-insensitive, with .gitignore honoured and .git left out.
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PERSON_FILE_OPS, PersonFound } from "../../server/protocol/person-file-ops";
import { opContext, tempWorkspace } from "../testing/exec";
import { holdsInOrder, ideFind } from "./find";

let ws: Awaited<ReturnType<typeof tempWorkspace>>;
beforeEach(async () => {
  ws = await tempWorkspace();
});
afterEach(() => ws.cleanup());

const find = async (query: string) =>
  PersonFound.parse((await ideFind.run(PERSON_FILE_OPS.ide_find.parse({ query }), opContext(ws.workspace))).meta);

describe("ide_find", () => {
  it("matches the query's characters in order, ignoring case", () => {
    expect(holdsInOrder("src/components/UseTree.tsx", "usetree")).toBe(true);
    expect(holdsInOrder("src/components/UseTree.tsx", "scut")).toBe(true);
    expect(holdsInOrder("src/components/UseTree.tsx", "treeuse")).toBe(false);
  });

  it("lists the workspace's matching files, .gitignore honoured and .git left out", async () => {
    for (const f of ["deep/a/b/c/needle.ts", "needle.md", "other.txt", "build/needle.js", ".git/needle"]) {
      await mkdir(join(ws.dir, f, ".."), { recursive: true });
      await writeFile(join(ws.dir, f), "");
    }
    await writeFile(join(ws.dir, ".gitignore"), "build/\n");
    const found = await find("NEEDLE");
    expect(found.paths.sort()).toEqual(["deep/a/b/c/needle.ts", "needle.md"]);
    expect(found.truncated).toBe(false);
    expect((await find("dabc")).paths).toEqual(["deep/a/b/c/needle.ts"]);
    expect((await find("zzz")).paths).toEqual([]);
  });
});
