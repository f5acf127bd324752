// Sparse tar entries, which node-tar cannot extract (a type 'S' entry it skips; a PAX sparse file
// it writes condensed, under GNU's made-up name): the archive is refused naming the file, and
// nothing is written. Crafted headers always; archives made by GNU tar itself where it is installed.
import { execFileSync, spawnSync } from "node:child_process";
import { closeSync, constants, ftruncateSync, openSync, writeSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeTar, makeTarGz, paxRecords } from "./archive-fixtures";
import { extractArchive } from "./archive";

const gnuTar = /GNU tar/.test(spawnSync("tar", ["--version"], { encoding: "utf8" }).stdout ?? "");

let base: string;
let dest: string;
let destFd: number;
beforeEach(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), "quiver-sparse-")));
  dest = join(base, "ws");
  await mkdir(dest);
  destFd = openSync(dest, constants.O_RDONLY | constants.O_DIRECTORY);
});
afterEach(async () => {
  closeSync(destFd);
  await rm(base, { recursive: true, force: true });
});

/** The refusal's message, after checking nothing is left in the destination. */
async function refused(archive: Buffer): Promise<string> {
  const path = join(base, "upload.bin");
  await writeFile(path, archive);
  const err = await extractArchive({ archivePath: path, destFd }).then(
    () => null,
    (e: Error) => e,
  );
  expect(err, "the archive should have been refused").not.toBeNull();
  expect(err!.name).toBe("ArchiveError");
  expect(await readdir(dest)).toEqual([]);
  return err!.message;
}

const sparseRefusal = (name: string) =>
  `entry "${name}" is a sparse file (tar --sparse); archives with sparse files are refused (make it again without --sparse / -S)`;

describe("sparse tar entries", () => {
  it("refuses a GNU type 'S' entry, plain and gzipped, after a file that would have been written", async () => {
    const items = [
      { name: "a.txt", data: "kept?" },
      { name: "disk.img", type: "S", data: "hello" },
    ];
    expect(await refused(makeTar(items))).toBe(sparseRefusal("disk.img"));
    expect(await refused(makeTarGz(items))).toBe(sparseRefusal("disk.img"));
  });

  it("refuses PAX sparse files (GNU.sparse.* keys) by their real name, in formats 0.0 and 1.0", async () => {
    const v00 = makeTar([
      {
        name: "PaxHeaders/disk.img",
        type: "x",
        data: paxRecords({
          path: "data/disk.img",
          "GNU.sparse.size": "10485760",
          "GNU.sparse.numblocks": "1",
          "GNU.sparse.offset": "4096",
          "GNU.sparse.numbytes": "5",
        }),
      },
      { name: "data/disk.img", data: "hello" },
    ]);
    expect(await refused(v00)).toBe(sparseRefusal("data/disk.img"));
    const v10 = makeTar([
      { name: "a.txt", data: "x" },
      {
        name: "PaxHeaders/disk.img",
        type: "x",
        data: paxRecords({
          "GNU.sparse.major": "1",
          "GNU.sparse.minor": "0",
          "GNU.sparse.name": "data/disk.img",
          "GNU.sparse.realsize": "10485760",
        }),
      },
      { name: "GNUSparseFile.0/disk.img", data: Buffer.concat([Buffer.from("1\n4096\n5\n"), Buffer.alloc(503)]) },
    ]);
    expect(await refused(v10)).toBe(sparseRefusal("data/disk.img"));
  });

  it.skipIf(!gnuTar)("refuses sparse files made by GNU tar in its own format and in PAX 0.0, 0.1 and 1.0", async () => {
    const src = join(base, "src");
    await mkdir(join(src, "data"), { recursive: true });
    await writeFile(join(src, "a.txt"), "plain\n");
    const img = join(src, "data", "disk.img");
    // A 10 MB hole with a little data in the middle, so the sparse map has a run.
    const fd = openSync(img, "w");
    try {
      ftruncateSync(fd, 10 * 1024 ** 2);
      writeSync(fd, "hello", 5_000_000);
    } finally {
      closeSync(fd);
    }
    const variants: [string, string[]][] = [
      ["gnu", ["--format=gnu"]],
      ["pax 0.0", ["--format=posix", "--sparse-version=0.0"]],
      ["pax 0.1", ["--format=posix", "--sparse-version=0.1"]],
      ["pax 1.0", ["--format=posix", "--sparse-version=1.0"]],
    ];
    for (const [label, flags] of variants) {
      const tar = execFileSync("tar", ["--sparse", ...flags, "-C", src, "-cf", "-", "a.txt", "data/disk.img"], {
        maxBuffer: 64 * 1024 ** 2,
      });
      // Otherwise the disk has no holes and tar stored a plain 10 MB file: the test would prove nothing.
      expect(tar.length, label).toBeLessThan(1024 ** 2);
      expect(await refused(tar), label).toBe(sparseRefusal("data/disk.img"));
      expect(await refused(gzipSync(tar)), label).toBe(sparseRefusal("data/disk.img"));
    }
    // The same tree without --sparse is an ordinary archive and comes out whole.
    const plain = execFileSync("tar", ["-C", src, "-czf", "-", "a.txt", "data/disk.img"], {
      maxBuffer: 64 * 1024 ** 2,
    });
    await writeFile(join(base, "plain.tgz"), plain);
    await extractArchive({ archivePath: join(base, "plain.tgz"), destFd });
    const out = await readFile(join(dest, "data", "disk.img"));
    expect(out.length).toBe(10 * 1024 ** 2);
    expect(out.subarray(5_000_000, 5_000_005).toString()).toBe("hello");
  });
});
