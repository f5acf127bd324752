// When the watcher reports an error (a folder it could not watch at inotify's limit, a failed
// read), nobody knows which files changed: every top-level entry is announced, so the tree lists
// again and open files under them reload. The watcher is faked here only to inject that error,
// which a real kernel gives only at limits no test should reach on a shared machine.
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";

type Callback = (err: Error | null, events: { path: string; type: string }[]) => void;
const subscribers: Callback[] = [];
vi.mock("@parcel/watcher", () => ({
  default: {
    subscribe: async (_dir: string, cb: Callback) => {
      subscribers.push(cb);
      return { unsubscribe: async () => undefined };
    },
  },
}));

const { Workspace } = await import("./workspace");
let dir: string;
afterEach(() => rm(dir, { recursive: true, force: true }));

describe("the watcher failing", () => {
  it("announces every top-level entry but .git", async () => {
    dir = await mkdtemp(join(tmpdir(), "quiver-watch-lost-"));
    await mkdir(join(dir, ".git"));
    await mkdir(join(dir, "src"));
    await writeFile(join(dir, "README.md"), "x");
    const ws = await Workspace.open(dir, { debounceMs: 10 });
    expect(await ws.watching()).toBe(true);
    const announced: string[][] = [];
    ws.onChange((paths) => announced.push(paths));
    subscribers.at(-1)!(new Error("inotify_add_watch: No space left on device"), []);
    await vi.waitFor(() => expect(announced).toEqual([["README.md", "src"]]));
    // Ordinary events still come through afterwards.
    subscribers.at(-1)!(null, [{ path: join(ws.root, "src/a.ts"), type: "create" }]);
    await vi.waitFor(() => expect(announced.at(-1)).toEqual(["src/a.ts"]));
    ws.dispose();
  });
});
