// A served workspace's end, with the commands sandboxed and under cgroups: its watch server runs
// in the helpers' cgroup (workspace/watch-sandboxed.ts), which the exec extension removes once it
// is empty. The watcher must end first: otherwise the removal waits its 5 s for a process that is
// still there, then leaves the cgroup behind, and every runner stop takes 5 s longer.
import { existsSync, readFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { expect, it } from "vitest";
import { cgroupsUsable } from "./exec/limits";
import { sandboxInfo } from "./exec/sandbox";
import { serve } from "./served";
import { outsideTmp } from "./testing/root";
import { watchServerNode, watchServers } from "./testing/watch-servers";
import { Workspace } from "./workspace/workspace";

it.runIf(sandboxInfo("auto").available && cgroupsUsable())(
  "ends the watch server before the sandbox, leaving no cgroup behind",
  async () => {
    const dir = await outsideTmp("quiver-served-end-");
    const workspace = await Workspace.open(dir);
    const served = await serve(workspace, {
      serverUrl: "ws://127.0.0.1:9/runner",
      send: () => true,
      signal: new AbortController().signal,
    });
    try {
      const pid = watchServerNode(dir);
      const line = readFileSync(`/proc/${pid}/cgroup`, "utf8")
        .split("\n")
        .find((l) => /quiver-\d+-helpers-/.test(l))!;
      const [, controller, path] = line.split(":");
      const cgroup = join("/sys/fs/cgroup", controller.split(",")[0] === "" ? "" : controller.split(",")[0], path);
      expect(existsSync(cgroup)).toBe(true);
      await served.dispose();
      expect(existsSync(cgroup)).toBe(false);
      expect(watchServers(dir)).toEqual([]);
    } finally {
      await served.dispose();
      await rm(dir, { recursive: true, force: true });
    }
  },
  60_000,
);
