// The restore's staged files are fsynced after git's stream, reopened by name in the stage
// folder, which the agent's commands can write in: a file swapped for a FIFO or a link fails the
// restore at once instead of holding one of libuv's threads (which every workspace on the runner
// shares) or following the link.
import { afterAll, describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { closeSync, constants, mkdtempSync, openSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { syncStaged } from "./stage";

const dir = mkdtempSync(join(tmpdir(), "quiver-stage-sync-"));
writeFileSync(join(dir, "outside"), "not staged\n");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const stage = (make: (path: string) => void) => {
  const folder = mkdtempSync(join(dir, "stage-"));
  for (let i = 0; i < 6; i++) writeFileSync(join(folder, String(i)), `staged ${i}\n`);
  make(folder);
  return openSync(folder, constants.O_RDONLY | constants.O_DIRECTORY);
};

describe("syncStaged", () => {
  it("fsyncs every staged regular file", async () => {
    const fd = stage(() => undefined);
    try {
      await expect(syncStaged(fd, ["0", "1", "2", "3", "4", "5"])).resolves.toBeUndefined();
    } finally {
      closeSync(fd);
    }
  });

  it("refuses a staged file swapped for a FIFO at once, instead of waiting for a writer", async () => {
    for (const name of ["0", "3", "5"]) {
      const fd = stage((folder) => {
        rmSync(join(folder, name));
        execFileSync("mkfifo", [join(folder, name)]);
      });
      try {
        await expect(syncStaged(fd, ["0", "1", "2", "3", "4", "5"])).rejects.toThrow(
          `the restore's staged file ${name} was replaced while it ran`,
        );
      } finally {
        closeSync(fd);
      }
    }
  }, 10_000);

  it("does not follow a staged file swapped for a link", async () => {
    const fd = stage((folder) => {
      rmSync(join(folder, "2"));
      symlinkSync(join(dir, "outside"), join(folder, "2"));
    });
    try {
      await expect(syncStaged(fd, ["0", "1", "2", "3"])).rejects.toThrow(/ELOOP|symbolic links/);
    } finally {
      closeSync(fd);
    }
  });
});
