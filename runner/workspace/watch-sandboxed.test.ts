// The watch server's owner when the server cannot run: each failed start is logged with the pause
// before the next, which doubles, and `watching()` says false; the workspace is never left
// waiting on a server that will not come. A real spawn of a program that does not exist.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it, vi } from "vitest";
import { SandboxedWatch } from "./watch-sandboxed";
import { Workspace } from "./workspace";

let dir: string;
let ws: Workspace;
afterEach(async () => {
  ws?.dispose();
  await rm(dir, { recursive: true, force: true });
});

const failures = {
  "its program is missing": (at: string) => () => ({ file: join(at, "no-such-sandbox"), args: [] }),
  "its command cannot be made": () => () => {
    throw new Error("no sandbox to start in");
  },
};

it.each(Object.entries(failures))(
  "retries a server that cannot start (%s) after 1, 2 and 4 s, until disposed",
  async (_, failing) => {
    dir = await mkdtemp(join(tmpdir(), "quiver-watch-fail-"));
    ws = await Workspace.open(dir, { watch: false });
    ws.helpers.useSandbox(failing(dir));
    const logged: string[] = [];
    const lost = vi.fn();
    const watch = new SandboxedWatch(ws.root, ws.helpers, { changed: () => undefined, lost }, (l) => logged.push(l));
    expect(await watch.ready).toBe(false);
    await vi.waitFor(() => expect(logged.length).toBeGreaterThanOrEqual(3), { timeout: 10_000, interval: 50 });
    watch.dispose();
    const pauses = logged.map((l) => /again in (\d+) s$/.exec(l)?.[1]);
    expect(pauses.slice(0, 3)).toEqual(["1", "2", "4"]);
    expect(logged[0]).toMatch(/could not start \((spawn .*no-such-sandbox ENOENT|no sandbox to start in)\)/);
    const count = logged.length;
    await new Promise((r) => setTimeout(r, 1_500));
    expect(logged.length).toBe(count);
    expect(lost).not.toHaveBeenCalled();
  },
);
