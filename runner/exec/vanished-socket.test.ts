// A host socket removed between the sandbox's listing of sockets to cover and bwrap's mounts:
// bwrap cannot make the mount point on the read-only root and fails its start. The warm sandbox
// and a terminal start again once with a fresh listing, so the command runs and the terminal
// opens without showing bwrap's error. The race is made real: a bwrap wrapper removes a covered
// socket before it execs the real bwrap with the stale arguments.
import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from "vitest";
import type { RunnerToServer } from "../../server/protocol/runner";
import { scrubEnv } from "./env";
import { vanishedCover } from "./host-sockets";
import { sandboxInfo } from "./sandbox";
import { ShadowRepo } from "../checkpoints/shadow";
import { runRg } from "../files/rg";
import { runGit } from "../workspace/git";
import { helperSandbox } from "./helper-sandbox";
import { PtyManager } from "./pty";
import { ShellService } from "./shell";
import { opContext, tempWorkspace } from "../testing/exec";

vi.setConfig({ testTimeout: 60_000 });

describe("vanishedCover", () => {
  const args = ["--ro-bind", "/", "/", "--ro-bind", "/dev/null", "/run/a b.sock", "--bind", "/w", "/w"];
  it("names the covered socket bwrap could not mount over", () => {
    const parents = "bwrap: Can't mkdir parents for /run/a b.sock: Read-only file system";
    const file = "bwrap: Can't create file at /run/a b.sock: Read-only file system";
    expect(vanishedCover(parents, args)).toBe("/run/a b.sock");
    expect(vanishedCover(`the sandbox could not start: x | ${file}`, args)).toBe("/run/a b.sock");
  });

  it("is undefined for any other failure, or a path that is not a cover", () => {
    expect(vanishedCover("bwrap: Can't mkdir parents for /w: Read-only file system", args)).toBeUndefined();
    expect(vanishedCover("bwrap: No permissions to create new namespace", args)).toBeUndefined();
    expect(vanishedCover("bwrap: Can't create file at /run/a b.sock.other: x", args)).toBeUndefined();
    expect(vanishedCover("echo bwrap: Can't create file at /run/a b.sock", args)).toBeUndefined();
  });
});

describe.runIf(sandboxInfo("auto").available)("a covered socket removed while the sandbox starts", () => {
  let ws: Awaited<ReturnType<typeof tempWorkspace>>;
  let dir: string;
  let server: Server;
  let wrapper: string;

  /** A covered socket, and a bwrap that removes it before its first start. */
  const loseTheRace = async () => {
    // Outside /tmp (the sandbox's own) and the workspace: covered, as a database's socket would be.
    dir = await mkdtemp("/var/tmp/quiver-vanish-");
    made.push(dir);
    server?.close();
    const socket = join(dir, "service.sock");
    server = createServer((c) => c.end("hello\n"));
    await new Promise<void>((resolve) => server.listen(socket, resolve));
    const real = sandboxInfo("auto").bwrap!;
    // The first start loses the race: the socket goes just before bwrap mounts over it.
    wrapper = join(dir, "bwrap");
    await writeFile(
      wrapper,
      `#!/bin/bash\nif [ ! -e '${dir}/started' ]; then : > '${dir}/started'; rm -f '${socket}'; fi\nexec '${real}' "$@"\n`,
    );
    await chmod(wrapper, 0o755);
  };
  const made: string[] = [];
  const gone = () => Promise.all(made.splice(0).map((d) => rm(d, { recursive: true, force: true })));

  beforeAll(async () => {
    ws = await tempWorkspace();
  });
  afterAll(async () => {
    server?.close();
    await ws.cleanup();
  });

  it("the warm sandbox starts again with a fresh listing, and the command runs", async () => {
    await loseTheRace();
    const logs: string[] = [];
    const shell = new ShellService({
      sandbox: { available: true, kind: "bubblewrap", bwrap: wrapper },
      env: scrubEnv(process.env),
      allowNetwork: false,
      log: (line) => logs.push(line),
    });
    onTestFinished(async () => {
      await shell.dispose();
      await gone();
    });
    const r = await shell.run({ command: "echo ran in $PWD" }, opContext(ws.workspace));
    expect(r.output).toBe(`ran in ${ws.dir}\n`);
    expect(r.ok).toBe(true);
    expect(await readFile(join(dir, "started"), "utf8")).toBe("");
    expect(logs.join("\n")).toContain(`${join(dir, "service.sock")} went away while the sandbox started`);
    expect(logs.join("\n")).toMatch(/bwrap: Can't (mkdir parents for|create file at) \/var\/tmp\/quiver-vanish-/);
  });

  it("a terminal opens again without showing bwrap's error", async () => {
    await loseTheRace();
    const sent: RunnerToServer[] = [];
    const manager = new PtyManager({
      workspaceRoot: ws.dir,
      sandbox: { available: true, kind: "bubblewrap", bwrap: wrapper },
      env: scrubEnv({ ...process.env, PS1: "$ " }),
      send: (m) => (sent.push(m), true),
      network: false,
    });
    onTestFinished(async () => {
      await manager.dispose();
      await gone();
    });
    const output = () => sent.flatMap((m) => (m.type === "pty.data" ? [m.data] : [])).join("");
    manager.handle({ type: "pty.open", ptyId: "t1", sessionId: "s1", cols: 120, rows: 24 });
    manager.handle({ type: "pty.input", ptyId: "t1", data: "echo ready-$((6*7))\r" });
    const deadline = Date.now() + 20_000;
    while (!output().includes("ready-42") && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(output()).toContain("ready-42");
    expect(output()).not.toContain("bwrap:");
    expect(sent.some((m) => m.type === "pty.exit")).toBe(false);
    expect(await readFile(join(dir, "started"), "utf8")).toBe("");
  });

  it("ripgrep, git and the checkpoints' git, run in the sandbox for the workspace, run again instead of failing", async () => {
    await loseTheRace();
    const helpers = helperSandbox(
      { available: true, kind: "bubblewrap", bwrap: wrapper },
      { workspace: ws.dir, hide: [] },
    );
    ws.workspace.helpers.useSandbox(helpers.wrap);
    onTestFinished(async () => {
      await helpers.dispose();
      await gone();
    });
    await writeFile(join(ws.dir, "needle.txt"), "a needle here\n");
    const found = await runRg(ws.workspace.helpers, ["-l", "needle", "."], {
      signal: new AbortController().signal,
      maxLines: 10,
    });
    expect(found).toMatchObject({ code: 0, lines: ["./needle.txt"] });
    expect(await readFile(join(dir, "started"), "utf8")).toBe("");

    await loseTheRace(); // a new socket, and a wrapper that removes it on its first start
    ws.workspace.helpers.useSandbox(
      helperSandbox({ available: true, kind: "bubblewrap", bwrap: wrapper }, { workspace: ws.dir, hide: [] }).wrap,
    );
    const git = await runGit(ws.workspace, ["--version"]);
    expect(git.stderr).toBe("");
    expect(git).toMatchObject({ code: 0 });
    expect(git.stdout.toString()).toMatch(/^git version /);

    await loseTheRace(); // and the checkpoints' git on the shadow repository
    ws.workspace.helpers.useSandbox(
      helperSandbox({ available: true, kind: "bubblewrap", bwrap: wrapper }, { workspace: ws.dir, hide: [] }).wrap,
    );
    const before = process.env.QUIVER_CHECKPOINT_DIR;
    process.env.QUIVER_CHECKPOINT_DIR = join(dir, "checkpoints");
    onTestFinished(() => {
      if (before === undefined) delete process.env.QUIVER_CHECKPOINT_DIR;
      else process.env.QUIVER_CHECKPOINT_DIR = before;
    });
    const shadow = await ShadowRepo.open(ws.workspace).git(["version"]);
    expect(shadow).toMatchObject({ code: 0, stderr: "" });
  });
});
