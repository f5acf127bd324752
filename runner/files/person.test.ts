import { mkdir, readFile, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PERSON_FILE_LIMITS, PERSON_FILE_OPS } from "../../server/protocol/person-file-ops";
import { sha256 } from "../workspace/ledger";
import { opContext, tempWorkspace } from "../testing/exec";
import { personFileOps } from "./person";

let ws: Awaited<ReturnType<typeof tempWorkspace>>;
let changed: string[][];
beforeEach(async () => {
  ws = await tempWorkspace();
  changed = [];
});
afterEach(() => ws.cleanup());

async function run(op: keyof typeof PERSON_FILE_OPS, input: unknown) {
  const ctx = { ...opContext(ws.workspace), filesChanged: (p: string[]) => changed.push(p) };
  const parsed = PERSON_FILE_OPS[op].parse(input);
  return personFileOps[op]
    .run(parsed, ctx)
    .catch((err: Error) => ({ ok: false, output: err.message, meta: undefined }));
}

describe("person file ops", () => {
  it("reads a whole file with its hash, long lines and all", async () => {
    const text = `${"a".repeat(5000)}\nline 2\n`;
    await writeFile(join(ws.dir, "big.txt"), text);
    const r = await run("ide_read", { path: "big.txt" });
    expect(r).toMatchObject({
      ok: true,
      output: text,
      meta: { path: "big.txt", hash: sha256(text), size: text.length },
    });
  });

  it("saves with an optimistic hash check and announces the change", async () => {
    await writeFile(join(ws.dir, "a.ts"), "one\n");
    const ok = await run("ide_write", { path: "a.ts", content: "two\n", expectHash: sha256("one\n") });
    expect(ok.ok).toBe(true);
    expect(await readFile(join(ws.dir, "a.ts"), "utf8")).toBe("two\n");
    expect(changed).toEqual([["a.ts"]]);
    // The agent changed it meanwhile: the stale save is refused and the disk keeps the agent's text.
    const stale = await run("ide_write", { path: "a.ts", content: "three\n", expectHash: sha256("one\n") });
    expect(stale).toMatchObject({ ok: false, meta: { conflict: true, hash: sha256("two\n") } });
    expect(await readFile(join(ws.dir, "a.ts"), "utf8")).toBe("two\n");
    // New files: expectHash null refuses to clobber an existing one.
    expect((await run("ide_write", { path: "a.ts", content: "x", expectHash: null })).ok).toBe(false);
    expect((await run("ide_write", { path: "src/new.ts", content: "x", expectHash: null })).ok).toBe(true);
    expect(await readFile(join(ws.dir, "src/new.ts"), "utf8")).toBe("x");
  });

  it("stays inside the workspace", async () => {
    for (const path of ["../escape.txt", "/etc/passwd", ".git/config"]) {
      const r = await run("ide_write", { path, content: "x" });
      expect(r.ok, path).toBe(false);
    }
    await symlink("/etc", join(ws.dir, "out"));
    expect((await run("ide_read", { path: "out/hostname" })).ok).toBe(false);
    expect((await run("ide_rename", { from: "out", to: "../elsewhere" })).ok).toBe(false);
    expect((await run("ide_delete", { path: "" }).catch(() => ({ ok: false }))).ok).toBe(false);
  });

  it("creates folders, renames and deletes", async () => {
    await writeFile(join(ws.dir, "a.txt"), "a");
    expect((await run("ide_mkdir", { path: "lib/util" })).ok).toBe(true);
    expect((await run("ide_rename", { from: "a.txt", to: "lib/util/b.txt" })).ok).toBe(true);
    expect(await readFile(join(ws.dir, "lib/util/b.txt"), "utf8")).toBe("a");
    expect((await run("ide_rename", { from: "lib", to: "lib/inner" })).ok).toBe(false);
    await writeFile(join(ws.dir, "c.txt"), "c");
    expect((await run("ide_rename", { from: "c.txt", to: "lib/util/b.txt" })).output).toMatch(/already exists/);
    expect((await run("ide_delete", { path: "lib" })).ok).toBe(true);
    expect((await run("ide_read", { path: "lib/util/b.txt" })).ok).toBe(false);
    expect(changed.flat()).toEqual(["lib/util", "a.txt", "lib/util/b.txt", "lib"]);
  });

  it("reads any file's bytes for preview and download, within the size limit and the workspace", async () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0xff]);
    await writeFile(join(ws.dir, "logo.png"), png);
    const r = await run("ide_read_bytes", { path: "logo.png" });
    expect(r).toMatchObject({ ok: true, meta: { path: "logo.png", size: png.length } });
    expect(Buffer.from(r.output, "base64")).toEqual(png);
    await writeFile(join(ws.dir, "huge.bin"), Buffer.alloc(PERSON_FILE_LIMITS.maxRawBytes + 1));
    expect(await run("ide_read_bytes", { path: "huge.bin" })).toMatchObject({
      ok: false,
      output: expect.stringContaining("more than"),
    });
    await mkdir(join(ws.dir, "dir"));
    expect(await run("ide_read_bytes", { path: "dir" })).toMatchObject({ ok: false, output: "dir is not a file" });
    expect(await run("ide_read_bytes", { path: "../etc/passwd" })).toMatchObject({ ok: false });
  });

  it("uploads a file's exact bytes into a new folder, and replaces one only when asked", async () => {
    const bytes = Buffer.from([0, 1, 2, 250, 255, 10, 13]);
    const up = await run("ide_write_bytes", { path: "assets/new/data.bin", base64: bytes.toString("base64") });
    expect(up).toMatchObject({ ok: true, meta: { path: "assets/new/data.bin", size: bytes.length } });
    expect(await readFile(join(ws.dir, "assets/new/data.bin"))).toEqual(bytes);
    expect(changed).toEqual([["assets/new/data.bin"]]);
    const again = await run("ide_write_bytes", {
      path: "assets/new/data.bin",
      base64: Buffer.from("other").toString("base64"),
    });
    expect(again).toMatchObject({ ok: false, output: "assets/new/data.bin already exists", meta: { exists: true } });
    expect(await readFile(join(ws.dir, "assets/new/data.bin"))).toEqual(bytes);
    expect(
      await run("ide_write_bytes", {
        path: "assets/new/data.bin",
        base64: Buffer.from("other").toString("base64"),
        overwrite: true,
      }),
    ).toMatchObject({ ok: true });
    expect(await readFile(join(ws.dir, "assets/new/data.bin"), "utf8")).toBe("other");
    // Outside git, Changes shows it as new (no earlier version).
    expect((await run("ide_original", { path: "assets/new/data.bin" })).meta).toMatchObject({ existed: false });
  });

  it("refuses uploads onto a folder, outside the workspace, too large, or not base64", async () => {
    await mkdir(join(ws.dir, "dir"));
    expect(await run("ide_write_bytes", { path: "dir", base64: "AA==", overwrite: true })).toMatchObject({
      ok: false,
      output: "dir is a folder",
    });
    expect(await run("ide_write_bytes", { path: "../escape.bin", base64: "AA==" })).toMatchObject({ ok: false });
    expect(await run("ide_write_bytes", { path: ".git/config", base64: "AA==" })).toMatchObject({ ok: false });
    const tooBig = Buffer.alloc(PERSON_FILE_LIMITS.maxUploadBytes + 1).toString("base64");
    expect(await run("ide_write_bytes", { path: "big.bin", base64: tooBig })).toMatchObject({
      ok: false,
      output: expect.stringContaining("more than"),
    });
    expect(() => PERSON_FILE_OPS.ide_write_bytes.parse({ path: "x", base64: "not base64!" })).toThrow(/base64/);
  });

  it("refuses binary files in the editor", async () => {
    await mkdir(join(ws.dir, "bin"));
    await writeFile(join(ws.dir, "bin/x.bin"), Buffer.from([1, 0, 2]));
    expect((await run("ide_read", { path: "bin/x.bin" })).output).toMatch(/binary/);
  });

  it("refuses a file that is not UTF-8 rather than open it damaged, and keeps a BOM", async () => {
    await writeFile(join(ws.dir, "latin1.txt"), Buffer.from("caf\xe9 cr\xe8me", "latin1"));
    const latin1 = await run("ide_read", { path: "latin1.txt" });
    expect(latin1.ok).toBe(false);
    expect(latin1.output).toMatch(/not UTF-8/);
    await writeFile(join(ws.dir, "bom.txt"), "\ufeffcafé");
    const bom = await run("ide_read", { path: "bom.txt" });
    expect(bom.ok).toBe(true);
    expect(bom.output).toBe("\ufeffcafé");
  });
});
