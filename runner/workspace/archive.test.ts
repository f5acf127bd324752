// Archive extraction against crafted hostile archives on a real temp folder: each is refused with
// a clear message, nothing is written outside, nothing half-extracted stays; an archive just
// under every ceiling comes out byte-exact with its modes.
import { execFileSync } from "node:child_process";
import { closeSync, constants, openSync } from "node:fs";
import { lstat, mkdir, mkdtemp, readdir, readFile, realpath, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { longestStall } from "../testing/event-loop";
import { makeTar, makeTarGz, makeZip, type TarItem } from "./archive-fixtures";
import { extractArchive, recoverExtractions, type ArchiveLimits } from "./archive";
import { Staging } from "./archive-staging";

let base: string;
let dest: string;
let destFd: number;
beforeEach(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), "quiver-archive-")));
  dest = join(base, "ws");
  await mkdir(dest);
  await mkdir(join(base, "outside"));
  await writeFile(join(base, "outside", "sentinel"), "untouched\n");
  destFd = openSync(dest, constants.O_RDONLY | constants.O_DIRECTORY);
});
// rm -r of the system: node's own gives up on a tree deeper than PATH_MAX left by a failed test.
afterEach(() => {
  closeSync(destFd);
  execFileSync("rm", ["-rf", base]);
});

async function extract(archive: Buffer, limits?: Partial<ArchiveLimits>, room?: { bytes: number; reason: string }) {
  const path = join(base, "upload.bin");
  await writeFile(path, archive);
  return extractArchive({ archivePath: path, destFd, limits, room });
}

/** The refusal's message, after checking nothing is left in the destination or outside. */
async function refused(archive: Buffer, limits?: Partial<ArchiveLimits>): Promise<string> {
  const err = await extract(archive, limits).then(
    () => null,
    (e: Error) => e,
  );
  expect(err, "the archive should have been refused").not.toBeNull();
  expect(err!.name).toBe("ArchiveError");
  expect(await readdir(dest)).toEqual([]);
  expect((await readdir(join(base, "outside"))).sort()).toEqual(["sentinel"]);
  expect(await readFile(join(base, "outside", "sentinel"), "utf8")).toBe("untouched\n");
  return err!.message;
}

describe("refused archives", () => {
  it("a zip bomb whose headers lie about its size is stopped by the bytes actually inflated", async () => {
    const zeros = Buffer.alloc(64 * 1024 ** 2);
    const bomb = makeZip([{ name: "small.txt", data: zeros, deflate: true, claimSize: 100 }]);
    expect(bomb.length).toBeLessThan(200 * 1024);
    expect(await refused(bomb)).toMatch(/inflates more than 200 times its own size .* \(a decompression bomb\)/);
    // With the ratio out of the way, the header's lie itself is caught at the entry's end.
    expect(await refused(bomb, { maxRatio: 1e9 })).toMatch(/claims 100 bytes but holds 67108864/);
  });

  it("a gzip bomb of a tar is stopped by the per-entry and total ceilings, counted as inflated", async () => {
    const big = makeTarGz([{ name: "big.bin", data: Buffer.alloc(8 * 1024 ** 2) }]);
    expect(await refused(big, { maxEntryBytes: 1024 ** 2, maxRatio: 1e9 })).toMatch(
      /"big\.bin" inflates past 1 MB, the ceiling for one file/,
    );
    expect(await refused(big, { maxTotalBytes: 2 * 1024 ** 2, maxRatio: 1e9 })).toMatch(/inflates past 2 MB/);
  });

  it("refuses ../ paths, absolute paths, drive letters and backslashes", async () => {
    expect(
      await refused(
        makeTarGz([
          { name: "ok.txt", data: "fine" },
          { name: "../outside/evil", data: "x" },
        ]),
      ),
    ).toMatch(/"\.\.\/outside\/evil" has a "\.\." segment/);
    expect(await refused(makeTarGz([{ name: "a/../../evil", data: "x" }]))).toMatch(/"\.\." segment/);
    expect(await refused(makeTarGz([{ name: `${base}/outside/abs`, data: "x" }]))).toMatch(/has an absolute path/);
    expect(await refused(makeZip([{ name: "/etc/cron.d/evil", data: "x" }]))).toMatch(/has an absolute path/);
    expect(await refused(makeZip([{ name: "C:/evil", data: "x" }]))).toMatch(/has an absolute path/);
    expect(await refused(makeZip([{ name: "..\\evil", data: "x" }]))).toMatch(/backslash/);
    expect(await refused(makeZip([{ name: ".git/hooks/pre-commit", data: "x" }]))).toMatch(/inside \.git/);
  });

  it("refuses git internals at any depth and in any case, C1 controls and text-direction characters", async () => {
    for (const name of ["sub/.git/config", "a/b/.GIT/hooks/post-checkout", "./x/.Git/config"])
      expect(await refused(makeTarGz([{ name, data: "[core]\n\tfsmonitor = touch /tmp/pwned\n" }]))).toMatch(
        /inside \.git/,
      );
    expect(await refused(makeZip([{ name: "vendor/lib/.git/HEAD", data: "ref: x" }]))).toMatch(/inside \.git/);
    expect(await refused(makeTarGz([{ name: "a\u0085b.txt", data: "x" }]))).toMatch(/control character/);
    expect(await refused(makeZip([{ name: "invoice\u202Etxt.exe", data: "x" }]))).toMatch(/text-direction/);
    expect(await refused(makeTarGz([{ name: "d\u2067ir/a", data: "x" }]))).toMatch(/text-direction/);
    // Look-alikes of .git are ordinary names.
    const ok = makeTarGz([
      { name: "sub/.gitignore", data: "x" },
      { name: "sub/.github/ci.yml", data: "x" },
      { name: "sub/git/config", data: "x" },
    ]);
    await extract(ok);
    expect((await readdir(join(dest, "sub"))).sort()).toEqual([".github", ".gitignore", "git"]);
  });

  it("refuses a symlink entry, and so a file written through it never happens", async () => {
    const viaTar = makeTarGz([
      { name: "l", type: "2", link: join(base, "outside") },
      { name: "l/pwned", data: "x" },
    ]);
    expect(await refused(viaTar)).toMatch(/"l" is a symbolic link to ".*outside"; archives with links are refused/);
    const relative = makeTarGz([
      { name: "l", type: "2", link: "../outside" },
      { name: "l/pwned", data: "x" },
    ]);
    expect(await refused(relative)).toMatch(/symbolic link/);
    const viaZip = makeZip([
      { name: "l", data: "../outside", mode: 0o120777 },
      { name: "l/pwned", data: "x" },
    ]);
    expect(await refused(viaZip)).toMatch(/"l" is a symbolic link; archives with links are refused/);
  });

  it("refuses a hard link to /etc/passwd, devices and FIFOs", async () => {
    expect(await refused(makeTarGz([{ name: "passwd", type: "1", link: "/etc/passwd" }]))).toMatch(
      /"passwd" is a hard link to "\/etc\/passwd"/,
    );
    expect(await refused(makeTarGz([{ name: "null", type: "3" }]))).toMatch(/is a device/);
    expect(await refused(makeTarGz([{ name: "pipe", type: "6" }]))).toMatch(/FIFO/);
    expect(await refused(makeZip([{ name: "pipe", mode: 0o010644 }]))).toMatch(/FIFO/);
  });

  it("refuses duplicate and case-colliding names, and a file that is also a folder", async () => {
    expect(
      await refused(
        makeTarGz([
          { name: "a.txt", data: "1" },
          { name: "a.txt", data: "2" },
        ]),
      ),
    ).toMatch(/"a\.txt" appears twice/);
    expect(
      await refused(
        makeZip([
          { name: "README", data: "1" },
          { name: "readme", data: "2" },
        ]),
      ),
    ).toMatch(/"README" and "readme" differ only in letter case/);
    expect(
      await refused(
        makeTarGz([
          { name: "x", data: "1" },
          { name: "x/y", data: "2" },
        ]),
      ),
    ).toMatch(/"x" is both a file and a folder/);
  });

  it("refuses 100,000 tiny files past the count ceiling (tar counted as read, zip before reading)", async () => {
    function* tiny(): Generator<TarItem> {
      for (let i = 0; i < 100_000; i++) yield { name: `f/${i}`, data: "x" };
    }
    expect(await refused(makeTarGz(tiny()))).toMatch(
      /more than 50,000 entries \(the ceiling\); "f\/50000" is one too many/,
    );
    const zip = makeZip(Array.from({ length: 60_000 }, (_, i) => ({ name: `f/${i}`, data: "" })));
    expect(await refused(zip)).toMatch(/has 60,000 entries, more than the ceiling of 50,000/);
  }, 120_000);

  it("refuses what is not an archive, and a room smaller than the archive naming the disk limit", async () => {
    expect(await refused(Buffer.from("just some text, not an archive"))).toMatch(
      /not a \.zip, \.tar\.gz, \.tgz or \.tar archive/,
    );
    const err = await extract(
      makeTarGz([{ name: "a", data: Buffer.alloc(4096, 1) }]),
      {},
      { bytes: 1000, reason: "the workspace's disk limit of 5 GB" },
    ).catch((e: Error) => e);
    expect((err as Error).message).toMatch(/inflates past 1000 bytes \(the workspace's disk limit of 5 GB\)/);
    expect(await readdir(dest)).toEqual([]);
  });
});

describe("accepted archives", () => {
  const limits = { maxTotalBytes: 300_000, maxEntryBytes: 200_000, maxEntries: 6 };
  const payload = Buffer.from(Array.from({ length: 200_000 }, (_, i) => (i * 7919) % 251));

  it("a tar.gz just under every ceiling comes out byte-exact with its modes", async () => {
    const archive = makeTarGz([
      { name: "./src/", type: "5", mode: 0o755 },
      { name: "src/run.sh", data: "#!/bin/sh\necho hi\n", mode: 0o4755 },
      { name: "src/blob.bin", data: payload, mode: 0o600 },
      { name: "docs/readonly/", type: "5", mode: 0o555 },
      { name: "docs/readonly/note.md", data: "note\n", mode: 0o444 },
      { name: "empty", data: "" },
    ]);
    const r = await extract(archive, { ...limits, maxTotalBytes: payload.length + 23 });
    expect(r).toMatchObject({ format: "tar.gz", files: 4, dirs: 2, bytes: payload.length + 23 });
    expect(r.entries.sort()).toEqual(["docs", "empty", "src"]);
    expect(await readFile(join(dest, "src/blob.bin"))).toEqual(payload);
    expect(await readFile(join(dest, "src/run.sh"), "utf8")).toBe("#!/bin/sh\necho hi\n");
    // setuid dropped; the owner can always read and write.
    expect((await stat(join(dest, "src/run.sh"))).mode & 0o7777).toBe(0o755);
    expect((await stat(join(dest, "src/blob.bin"))).mode & 0o7777).toBe(0o600);
    expect((await stat(join(dest, "docs/readonly"))).mode & 0o7777).toBe(0o755);
    expect((await stat(join(dest, "docs/readonly/note.md"))).mode & 0o7777).toBe(0o644);
    expect((await readdir(dest)).filter((n) => n.startsWith(".quiver-"))).toEqual([]);
  });

  it("a zip just under every ceiling, deflated and stored, comes out byte-exact with its modes", async () => {
    const archive = makeZip([
      { name: "bin/", mode: 0o040755 },
      { name: "bin/tool", data: "#!/bin/sh\n", mode: 0o100755, deflate: true },
      { name: "data/blob.bin", data: payload, deflate: true },
      { name: "plain.txt", data: "stored\n" },
    ]);
    const r = await extract(archive, limits);
    expect(r).toMatchObject({ format: "zip", files: 3, dirs: 1 });
    expect(await readFile(join(dest, "data/blob.bin"))).toEqual(payload);
    expect((await stat(join(dest, "bin/tool"))).mode & 0o777).toBe(0o755);
    expect((await stat(join(dest, "plain.txt"))).mode & 0o777).toBe(0o644);
    expect(await readFile(join(dest, "plain.txt"), "utf8")).toBe("stored\n");
  });

  it("a plain tar works, and names already in the destination are refused before anything moves", async () => {
    await extract(makeTar([{ name: "a.txt", data: "first" }]));
    const err = await extract(
      makeTar([
        { name: "b.txt", data: "b" },
        { name: "a.txt", data: "second" },
      ]),
    ).catch((e: Error) => e);
    expect((err as Error).message).toMatch(/"a\.txt" already exists in the destination folder/);
    expect((await readdir(dest)).sort()).toEqual(["a.txt"]);
    expect(await readFile(join(dest, "a.txt"), "utf8")).toBe("first");
  });
});

describe("staging", () => {
  it("a folder swapped for a link to outside during extraction stops the write there (kernel, not a check)", async () => {
    const staging = new Staging(destFd);
    staging.mkdir(["d"], 0o755);
    const [name] = (await readdir(dest)).filter((n) => n.startsWith(".quiver-extract-"));
    await rm(join(dest, name, "d"), { recursive: true });
    await symlink(join(base, "outside"), join(dest, name, "d"));
    expect(() => staging.createFile(["d", "pwned"], 0o644)).toThrow(/"d" became a symbolic link during extraction/);
    await staging.abort();
    expect(await readdir(join(base, "outside"))).toEqual(["sentinel"]);
    expect(await readdir(dest)).toEqual([]);
  });

  it("after a kill -9, a staging folder is removed and a ready one is finished", async () => {
    await mkdir(join(dest, ".quiver-extract-999999999-abc/src"), { recursive: true });
    await writeFile(join(dest, ".quiver-extract-999999999-abc/src/half"), "half");
    await mkdir(join(dest, ".quiver-ready-def/lib"), { recursive: true });
    await writeFile(join(dest, ".quiver-ready-def/lib/x.js"), "done");
    await writeFile(join(dest, "moved-before-the-kill"), "done");
    const r = await recoverExtractions(destFd);
    expect(r).toEqual({ removed: [".quiver-extract-999999999-abc"], finished: [".quiver-ready-def"] });
    expect((await readdir(dest)).sort()).toEqual(["lib", "moved-before-the-kill"]);
    expect(await readFile(join(dest, "lib/x.js"), "utf8")).toBe("done");
    expect((await lstat(join(dest, "lib"))).isDirectory()).toBe(true);
  });

  // What a command in the workspace can put in a folder of ours (an archive alone stops at 50,000
  // entries): each name in it is renamed, or looked up in the destination, on the runner's loop.
  const fill = (folder: string, n: number) => {
    const py = `import os\nfor i in range(${n}): os.close(os.open(f"n{i}", os.O_CREAT | os.O_WRONLY))`;
    execFileSync("python3", ["-c", py], { cwd: folder });
  };

  it("a ready folder of 100,000 names is moved into place, the loop turning", async () => {
    await mkdir(join(dest, ".quiver-ready-def"));
    fill(join(dest, ".quiver-ready-def"), 100_000);
    const { value, stallMs } = await longestStall(() => recoverExtractions(destFd));
    expect(value).toEqual({ removed: [], finished: [".quiver-ready-def"] });
    const names = await readdir(dest);
    expect(names).toHaveLength(100_000);
    expect(names.filter((n) => n.startsWith(".quiver-"))).toEqual([]);
    // Not 250 ms: two test files at once on two cores stall any code a few hundred ms.
    expect(stallMs).toBeLessThan(1_000);
  }, 120_000);

  it("a commit of 100,000 names checks them and moves them in, the loop turning, a clash still refused", async () => {
    const staging = new Staging(destFd);
    const file = staging.createFile(["real.txt"], 0o644);
    file.write(Buffer.from("real\n"));
    file.close();
    const [name] = (await readdir(dest)).filter((n) => n.startsWith(".quiver-extract-"));
    fill(join(dest, name), 100_000);
    // One clash among them is found wherever it falls in the listing, and nothing has moved.
    await writeFile(join(dest, "n99999"), "mine\n");
    const clash = await longestStall(async () => {
      try {
        await staging.commit();
        return null;
      } catch (err) {
        return err as Error;
      }
    });
    expect(clash.value?.message).toMatch(/"n99999" already exists in the destination folder/);
    expect((await readdir(dest)).sort()).toEqual([name, "n99999"]);
    expect(clash.stallMs).toBeLessThan(1_000);
    await rm(join(dest, "n99999"));
    const { value, stallMs } = await longestStall(() => staging.commit());
    expect(value).toHaveLength(100_001);
    expect(await readdir(dest)).toHaveLength(100_001);
    expect(await readFile(join(dest, "real.txt"), "utf8")).toBe("real\n");
    expect(stallMs).toBeLessThan(1_000);
  }, 120_000);

  it("a dead staging folder the agent grew 20,000 folders deep goes, the loop turning, links in it not followed", async () => {
    // What a command can do to a staging folder left in the workspace: past the runner's
    // descriptors in depth (the recursive rm -r held one a level), a link out at the bottom.
    const py = [
      "import os, sys",
      'os.chdir(".quiver-extract-999999999-abc")',
      "for i in range(20000):",
      '  os.mkdir("d"); os.chdir("d")',
      'os.symlink(sys.argv[1], "out")',
    ].join("\n");
    await mkdir(join(dest, ".quiver-extract-999999999-abc"));
    execFileSync("python3", ["-c", py, join(base, "outside")], { cwd: dest });
    const { value, stallMs } = await longestStall(() => recoverExtractions(destFd));
    expect(value.removed).toEqual([".quiver-extract-999999999-abc"]);
    expect(await readdir(dest)).toEqual([]);
    expect(await readdir(join(base, "outside"))).toEqual(["sentinel"]);
    // Not 250 ms: two test files at once on two cores stall any code a few hundred ms.
    expect(stallMs).toBeLessThan(1_000);
  }, 120_000);
});
