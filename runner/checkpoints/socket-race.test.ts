// The checkpoints' streaming git (cat-file --batch, which a restore stages its files through)
// starts again when a covered host socket vanished as its sandbox started, instead of failing the
// restore with bwrap's error.
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from "vitest";
import { join } from "node:path";
import { sandboxInfo } from "../exec/sandbox";
import { helperSandbox } from "../exec/helper-sandbox";
import { tempWorkspace } from "../testing/exec";
import { loseSocketRace } from "../testing/socket-race";
import { ShadowRepo } from "./shadow";
import { catBlobs } from "./stage";

vi.setConfig({ testTimeout: 60_000 });

describe.runIf(sandboxInfo("auto").available)("cat-file through a sandbox that loses a socket race", () => {
  let ws: Awaited<ReturnType<typeof tempWorkspace>>;
  const before = process.env.QUIVER_CHECKPOINT_DIR;
  beforeAll(async () => {
    ws = await tempWorkspace();
    process.env.QUIVER_CHECKPOINT_DIR = join(ws.dir, "..", `${ws.dir.split("/").pop()}-checkpoints`);
  });
  afterAll(async () => {
    if (before === undefined) delete process.env.QUIVER_CHECKPOINT_DIR;
    else process.env.QUIVER_CHECKPOINT_DIR = before;
    await ws.cleanup();
  });

  it("streams every blob after starting once more", async () => {
    const shadow = ShadowRepo.open(ws.workspace);
    const id = (await shadow.ok(["hash-object", "-w", "--stdin"], { input: "blob body\n" })).toString().trim();
    const race = await loseSocketRace();
    const helpers = helperSandbox(race.sandbox, { workspace: ws.dir, hide: [] });
    ws.workspace.helpers.useSandbox(helpers.wrap);
    onTestFinished(async () => {
      await helpers.dispose();
      await race.dispose();
    });
    const got: string[] = [];
    await catBlobs(shadow, [id, id], {
      open: (i, size) => got.push(`open ${i} ${size}`),
      data: (chunk) => got.push(chunk.toString()),
      close: (i) => got.push(`close ${i}`),
    });
    expect(got).toEqual(["open 0 10", "blob body\n", "close 0", "open 1 10", "blob body\n", "close 1"]);
    expect(await race.starts()).toBe(2);
  });
});
