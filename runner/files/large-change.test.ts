// A change to a file far larger than any read cap (a sparse file costs the agent no disk) is
// refused unread, with a message that says what to do, instead of reading it whole into the
// runner's memory for its hash and its undo.
import { open, readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PERSON_FILE_OPS } from "../../server/protocol/person-file-ops";
import { CHANGE_READ_MAX } from "../workspace/atomic";
import { opContext, tempWorkspace } from "../testing/exec";
import { writeFileOp } from "./edit";
import { personFileOps } from "./person";

let ws: Awaited<ReturnType<typeof tempWorkspace>>;
beforeEach(async () => (ws = await tempWorkspace()));
afterEach(() => ws.cleanup());

const GiB = 1024 * 1024 * 1024;

/** A sparse file of `size` bytes ending in `tail`. */
async function sparse(name: string, size: number, tail: string): Promise<void> {
  const fh = await open(join(ws.dir, name), "w");
  await fh.truncate(size - tail.length);
  await fh.write(tail, size - tail.length);
  await fh.close();
}

const catching = (p: Promise<{ ok: boolean; output: string }>) =>
  p.catch((err: Error) => ({ ok: false, output: err.message }));

describe("changes to a file over CHANGE_READ_MAX", () => {
  it("are refused unread by the editor's save, its upload and the agent's write, and the file is kept", async () => {
    await sparse("huge.log", 1.5 * GiB, "the end\n");
    const ctx = opContext(ws.workspace);
    const rss = process.memoryUsage().rss;
    const results = [
      await catching(
        personFileOps.ide_write.run(
          PERSON_FILE_OPS.ide_write.parse({ path: "huge.log", content: "x", expectHash: "0".repeat(64) }),
          ctx,
        ),
      ),
      await catching(
        personFileOps.ide_write_bytes.run(
          PERSON_FILE_OPS.ide_write_bytes.parse({ path: "huge.log", base64: "eA==", overwrite: true }),
          ctx,
        ),
      ),
      await catching(writeFileOp.run({ path: "huge.log", content: "x" }, ctx)),
    ];
    const grew = process.memoryUsage().rss - rss;
    for (const r of results) {
      expect(r.ok).toBe(false);
      expect(r.output).toContain(`huge.log is ${1.5 * GiB} bytes, more than the file tools change`);
      expect(r.output).toContain("shell command");
    }
    expect(grew).toBeLessThan(CHANGE_READ_MAX);
    const fh = await open(join(ws.dir, "huge.log"), "r");
    const { size } = await fh.stat();
    await fh.close();
    expect(size).toBe(1.5 * GiB);
  });

  it("a file just under it is still saved", async () => {
    const size = CHANGE_READ_MAX - 1;
    await sparse("under.bin", size, "z");
    const r = await catching(
      personFileOps.ide_write_bytes.run(
        PERSON_FILE_OPS.ide_write_bytes.parse({ path: "under.bin", base64: "eA==", overwrite: true }),
        opContext(ws.workspace),
      ),
    );
    expect(r.ok).toBe(true);
    expect(await readFile(join(ws.dir, "under.bin"), "utf8")).toBe("x");
  });
});
