// A runner crawls its workspace's tree once, where it watches it: in the commands' sandbox when
// there is one, never first in the runner itself (a watch that lasted only until the exec
// extension loaded, and crawled every folder for nothing). The native watcher's subscribe is
// observed, not replaced; and a real runner process, sandboxed and not, still announces a file
// written by hand.
import watcher from "@parcel/watcher";
import { rmSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { sandboxInfo } from "../exec/sandbox";
import { serve, type Served } from "../served";
import { waitFor } from "../../server/testing/runner";
import { FakeServer, outsideTmp, spawnRootRunner, type RootRunner } from "../testing/root";
import { watchServers } from "../testing/watch-servers";
import { Workspace } from "./workspace";

const sandboxed = sandboxInfo("auto").available;
const cleanups: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  vi.restoreAllMocks();
  for (const clean of cleanups.splice(0).reverse()) await clean();
});

/** A folder outside /tmp (the sandbox's own /tmp would hide it) with 300 folders in it. */
async function tree(): Promise<string> {
  const dir = await outsideTmp("quiver-watch-once-");
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  for (let i = 0; i < 300; i++) await mkdir(join(dir, `d${i}`, "inner"), { recursive: true });
  return dir;
}

async function served(dir: string): Promise<{ workspace: Workspace; changed: string[] }> {
  const workspace = await Workspace.open(dir, { watch: "when-served" });
  const changed: string[] = [];
  workspace.onChange((paths) => changed.push(...paths));
  const s: Served = await serve(workspace, {
    serverUrl: "ws://127.0.0.1:9/runner",
    send: () => true,
    signal: new AbortController().signal,
  });
  cleanups.push(() => s.dispose());
  return { workspace, changed };
}

const byHand = (dir: string) => writeFile(join(dir, "d7", "inner", "by-hand.txt"), "x");

describe("a served workspace's watcher starts once, where it runs", () => {
  it.runIf(sandboxed)(
    "sandboxed: nothing watched in the runner, before or after serving; the watch server announces",
    async () => {
      const subscribe = vi.spyOn(watcher, "subscribe");
      const dir = await tree();
      const { workspace, changed } = await served(dir);
      expect(await workspace.watching()).toBe(true);
      expect(subscribe).not.toHaveBeenCalled();
      expect(watchServers(dir).length).toBeGreaterThan(0);
      await byHand(dir);
      await waitFor(() => changed.some((p) => p.startsWith("d7")), 20_000, "the hand-written file announced");
    },
    60_000,
  );

  it("unsandboxed: watched in the runner, once", async () => {
    const before = process.env.QUIVER_SANDBOX;
    process.env.QUIVER_SANDBOX = "off";
    cleanups.push(
      () => void (before === undefined ? delete process.env.QUIVER_SANDBOX : (process.env.QUIVER_SANDBOX = before)),
    );
    const subscribe = vi.spyOn(watcher, "subscribe");
    const dir = await tree();
    const workspace = await Workspace.open(dir, { watch: "when-served" });
    cleanups.push(() => workspace.dispose());
    // Held back until served.
    expect(await workspace.watching()).toBe(false);
    expect(subscribe).not.toHaveBeenCalled();
    workspace.watchWhenServed();
    workspace.watchWhenServed();
    expect(await workspace.watching()).toBe(true);
    expect(subscribe).toHaveBeenCalledTimes(1);
    expect(watchServers(dir)).toEqual([]);
  }, 60_000);
});

describe("a runner process watches its workspace from the start", () => {
  let server: FakeServer | undefined;
  let runner: RootRunner | undefined;
  afterEach(async () => {
    await runner?.stop();
    await server?.close();
  });

  it.each(sandboxed ? ["auto", "off"] : ["off"])(
    "QUIVER_SANDBOX=%s: a file written by hand is announced",
    async (mode) => {
      const dir = await tree();
      server = new FakeServer();
      runner = spawnRootRunner(await server.listen(), ["--workspace", dir], { QUIVER_SANDBOX: mode });
      await server.hello();
      expect(watchServers(dir).length > 0).toBe(mode === "auto");
      await byHand(dir);
      await waitFor(
        () => server!.frames.some((f) => f.type === "files.changed" && f.paths.some((p) => p.startsWith("d7"))),
        20_000,
        "the hand-written file announced",
      );
    },
    90_000,
  );
});
