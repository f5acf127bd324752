// The workspace's watcher on a real folder, changed by another process as a person's editor or
// terminal would: each change announced once, relative to the root, without git's folder, the
// insides of node_modules' packages or the echo of the file tools' own writes; and thousands
// of new files at once (an install) neither block the runner nor go unannounced. The same in the
// runner and in the commands' sandbox (watch-server.ts), where it runs when there is one.
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { helperSandbox, type HelperSandbox } from "../exec/helper-sandbox";
import { sandboxInfo } from "../exec/sandbox";
import { Workspace } from "./workspace";
import { resolveInside } from "./paths";

const run = promisify(execFile);
/** Runs `script` in a separate node process, with the workspace folder as its cwd. */
const elsewhere = (dir: string, script: string) =>
  run(process.execPath, ["-e", `const fs = require("fs");\n${script}`], { cwd: dir });

const sandbox = sandboxInfo("auto");
let dir: string | undefined;
let ws: Workspace | undefined;
let helpers: HelperSandbox | undefined;
let announced: string[][];
afterEach(async () => {
  ws?.dispose();
  await helpers?.dispose();
  if (dir) await rm(dir, { recursive: true, force: true });
  [ws, helpers, dir] = [undefined, undefined, undefined];
});

const paths = () => [...new Set(announced.flat())].sort();

/** Every path announced, once `done` holds and nothing more has come for a while (or 20 s). */
async function settled(done: (paths: string[]) => boolean = () => true): Promise<string[]> {
  const until = Date.now() + 20_000;
  let seen = -1;
  while (Date.now() < until && (seen !== announced.length || !done(paths()))) {
    seen = announced.length;
    await new Promise((r) => setTimeout(r, 500));
  }
  return paths();
}

describe.each([
  ["in the runner", false],
  ["in the sandbox", true],
])("the workspace watcher %s", (_, sandboxed) => {
  beforeEach(async (ctx) => {
    if (sandboxed && !sandbox.available) return ctx.skip();
    dir = await mkdtemp(join(tmpdir(), "quiver-watch-"));
    await mkdir(join(dir, "src"));
    const opened = (ws = await Workspace.open(dir, { debounceMs: 50 }));
    if (sandboxed) {
      helpers = helperSandbox(sandbox, { workspace: opened.root, hide: [] });
      opened.helpers.useSandbox(helpers.wrap);
    }
    expect(await opened.watching()).toBe(true);
    announced = [];
    opened.onChange((paths) => announced.push(paths));
  });

  it("announces what another process changes, once, relative to the root; not .git, nor inside node_modules' packages", async () => {
    await elsewhere(
      dir!,
      `fs.writeFileSync("src/a.ts", "1");
       fs.mkdirSync(".git/objects", { recursive: true }); fs.writeFileSync(".git/objects/x", "1");
       fs.mkdirSync("node_modules/pkg/lib", { recursive: true }); fs.writeFileSync("node_modules/pkg/lib/i.js", "1");`,
    );
    const got = await settled((p) => p.includes("src/a.ts") && p.includes("node_modules"));
    // A folder made with its contents in one go may be announced as the folder alone (its
    // contents can land before the folder is watched): the tree lists it again either way.
    expect(got).toEqual(expect.arrayContaining(["src/a.ts", "node_modules"]));
    expect(got.filter((p) => p.startsWith(".git") || p.startsWith("node_modules/pkg/"))).toEqual([]);
    expect(announced.length).toBeLessThanOrEqual(2);
  });

  it("drops the echo of the file tools' own writes (already announced by the write)", async () => {
    const target = await resolveInside(ws!.root, "tool.txt", "write");
    await ws!.write("s1", [{ path: target, content: "x", expectHash: null }]);
    await elsewhere(dir!, `fs.writeFileSync("person.txt", "y");`);
    expect(await settled((p) => p.includes("person.txt"))).toEqual(["person.txt", "tool.txt"]);
    expect(announced[0]).toEqual(["tool.txt"]);
    expect(announced.slice(1).flat()).toEqual(["person.txt"]);
  });

  it("3,000 files created at once are announced without blocking the runner", async () => {
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    // Into a folder already watched: a new folder's first files can land before its watch does.
    await elsewhere(dir!, `for (let i = 0; i < 3000; i++) fs.writeFileSync("src/f" + i + ".txt", "");`);
    // Each file is announced, or a folder that holds it is (a burst's folder always is: the
    // watcher can drop some of a burst's events, bursts.ts): either way the IDE reads it again.
    const covered = (p: string[]) =>
      Array.from({ length: 3000 }, (_, i) => `src/f${i}.txt`).every((f) => p.includes(f) || p.includes("src"));
    const got = await settled(covered);
    delay.disable();
    expect(covered(got)).toBe(true);
    // Node's own recursive fs.watch held the loop for 22 s with 5,100 files (it re-reads the
    // folder per file created). Fewer here: inotify drops events past its queue (16,384), and
    // the watcher skips its overflow notice, so a larger burst may go partly unannounced.
    expect(delay.max / 1e6).toBeLessThan(3000);
  }, 60_000);
});
