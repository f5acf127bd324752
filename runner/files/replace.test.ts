// ide_replace on a real workspace: line by line as the search matched (literal or regex, smart
// case), groups in a regex replacement, files written atomically and announced, and the files it
// cannot take (binary, gone) named rather than damaged.
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PERSON_FILE_OPS, PersonChanges } from "../../server/protocol/person-file-ops";
import { opContext, tempWorkspace } from "../testing/exec";
import { personFileOps } from "./person";
import { replaceLines, searchRegex } from "./replace";

let ws: Awaited<ReturnType<typeof tempWorkspace>>;
let announced: string[][];
beforeEach(async () => {
  ws = await tempWorkspace();
  announced = [];
});
afterEach(() => ws.cleanup());

const replace = (input: unknown) =>
  personFileOps.ide_replace.run(PERSON_FILE_OPS.ide_replace.parse(input), {
    ...opContext(ws.workspace),
    filesChanged: (p: string[]) => void announced.push(p),
  });
const read = (p: string) => readFile(join(ws.dir, p), "utf8");

describe("ide_replace", () => {
  it("replaces a literal in the named files only, with smart case, and says what it did", async () => {
    await writeFile(join(ws.dir, "a.ts"), "const oldName = 1;\nuse(oldName, OLDNAME);\n");
    await writeFile(join(ws.dir, "b.ts"), "oldName.x\n");
    await writeFile(join(ws.dir, "c.ts"), "oldName here too, but not listed\n");
    const r = await replace({ pattern: "oldname", replacement: "newName", paths: ["a.ts", "b.ts"] });
    expect(r).toMatchObject({ ok: true, meta: { files: 2, replacements: 4, skipped: [] } });
    expect(await read("a.ts")).toBe("const newName = 1;\nuse(newName, newName);\n");
    expect(await read("b.ts")).toBe("newName.x\n");
    expect(await read("c.ts")).toBe("oldName here too, but not listed\n");
    expect(announced).toEqual([["a.ts", "b.ts"]]);
    // Capitals in the pattern: exact case, as the search did.
    await writeFile(join(ws.dir, "d.ts"), "Foo foo\n");
    expect(await replace({ pattern: "Foo", replacement: "Bar", paths: ["d.ts"] })).toMatchObject({
      meta: { replacements: 1 },
    });
    expect(await read("d.ts")).toBe("Bar foo\n");
    // A literal replacement is taken as written, $ and all.
    expect(await replace({ pattern: "foo", replacement: "$1$&", caseSensitive: true, paths: ["d.ts"] })).toMatchObject({
      ok: true,
    });
    expect(await read("d.ts")).toBe("Bar $1$&\n");
  });

  it("a regex replaces line by line with its groups, and never across a line's end", async () => {
    await writeFile(join(ws.dir, "r.txt"), "key: one\nkey: two\nkeys:\nthree\n");
    const r = await replace({ pattern: "^key: (\\w+)$", regex: true, replacement: "$1 = key", paths: ["r.txt"] });
    expect(r).toMatchObject({ ok: true, meta: { files: 1, replacements: 2 } });
    expect(await read("r.txt")).toBe("one = key\ntwo = key\nkeys:\nthree\n");
    expect(await replace({ pattern: "keys:\\s+three", regex: true, replacement: "x", paths: ["r.txt"] })).toMatchObject(
      { meta: { replacements: 0, files: 0 } },
    );
  });

  it("keeps its earlier content for the Changes panel", async () => {
    await writeFile(join(ws.dir, "a.txt"), "alpha\n");
    await replace({ pattern: "alpha", replacement: "beta", paths: ["a.txt"] });
    const changes = PersonChanges.parse((await personFileOps.ide_changes.run({}, opContext(ws.workspace))).meta);
    expect(changes.files).toEqual([{ path: "a.txt", status: "modified", added: 1, removed: 1 }]);
  });

  it("names the files it cannot take and refuses patterns it cannot use", async () => {
    await writeFile(join(ws.dir, "bin.dat"), Buffer.from([0x61, 0, 0x62]));
    await writeFile(join(ws.dir, "ok.txt"), "a\n");
    const r = await replace({ pattern: "a", replacement: "z", paths: ["bin.dat", "gone.txt", "ok.txt"] });
    expect(r).toMatchObject({
      ok: true,
      meta: {
        files: 1,
        replacements: 1,
        skipped: [
          { path: "bin.dat", reason: "it is not UTF-8 text" },
          { path: "gone.txt", reason: "it no longer exists" },
        ],
      },
    });
    expect(await readFile(join(ws.dir, "bin.dat"))).toEqual(Buffer.from([0x61, 0, 0x62]));
    expect(await replace({ pattern: "(", regex: true, replacement: "x", paths: ["ok.txt"] })).toMatchObject({
      ok: false,
      output: expect.stringContaining("not a regular expression"),
    });
    expect(await replace({ pattern: "z*", regex: true, replacement: "x", paths: ["ok.txt"] })).toMatchObject({
      ok: false,
      output: expect.stringContaining("matches empty text"),
    });
    await expect(replace({ pattern: "a", replacement: "b", paths: ["../outside.txt"] })).rejects.toThrow();
    expect(await read("ok.txt")).toBe("z\n");
  });

  it("builds the search's regex: escaped literal, smart case", () => {
    expect(searchRegex({ pattern: "a.b" }).test("axb")).toBe(false);
    expect(searchRegex({ pattern: "a.b", regex: true }).test("axb")).toBe(true);
    expect(replaceLines("A a", searchRegex({ pattern: "a" }), "x", true)).toEqual({ text: "x x", count: 2 });
  });
});
