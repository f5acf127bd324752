// Reading a file through its descriptor stays within the cap however the file changes meanwhile:
// a command can grow it (a sparse `truncate -s 1G`) between the size check and the read, and the
// read then takes what fits and says there is more, rather than reading the whole of it.
import { closeSync, ftruncateSync, openSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readChild, readUpTo } from "./fd";

let dir: string;
beforeEach(async () => (dir = await mkdtemp(join(tmpdir(), "quiver-fd-"))));
afterEach(() => rm(dir, { recursive: true, force: true }));

describe("readUpTo", () => {
  it("reads a file whole when it fits, and at most the cap of one grown past it", async () => {
    const path = join(dir, "f");
    writeFileSync(path, "0123456789");
    const fd = openSync(path, "r+");
    try {
      expect(await readUpTo(fd, 10)).toEqual({ data: Buffer.from("0123456789"), more: false });
      expect(await readUpTo(fd, 4)).toEqual({ data: Buffer.from("0123"), more: true });
      // Grown after it was opened (and after any size check), sparse: 1 GiB of nothing.
      ftruncateSync(fd, 1024 ** 3);
      const before = process.memoryUsage().arrayBuffers;
      const r = await readUpTo(fd, 3 * 1024 * 1024);
      expect(r.data.length).toBe(3 * 1024 * 1024);
      expect(r.more).toBe(true);
      expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(64 * 1024 * 1024);
    } finally {
      closeSync(fd);
    }
  });

  it("readChild refuses a file that grew past its cap between the check and the read", async () => {
    writeFileSync(join(dir, "small"), "ok");
    const dirFd = openSync(dir, "r");
    try {
      expect((await readChild(dirFd, "small", 10))?.toString()).toBe("ok");
      writeFileSync(join(dir, "grown"), "x".repeat(11));
      expect(await readChild(dirFd, "grown", 10)).toBeNull();
    } finally {
      closeSync(dirFd);
    }
  });
});
