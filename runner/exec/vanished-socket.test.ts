// A host socket removed between the sandbox's listing of sockets to cover and bwrap's mounts:
// bwrap cannot make the mount point on the read-only root and fails its start. The warm sandbox,
// a terminal, ripgrep, git, the checkpoints' git and cat-file stream and the language server
// start again once with a fresh listing, so nothing shows bwrap's error. The race is made real
// (runner/testing/socket-race.ts: a bwrap wrapper removes a covered socket before it execs the
// real bwrap with the stale arguments). Every such case is in this one file, one at a time: a
// socket removed here is one another file's sandbox may race with too.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from "vitest";
import type { RunnerToServer } from "../../server/protocol/runner";
import { scrubEnv } from "./env";
import { vanishedCover } from "./host-sockets";
import { sandboxInfo } from "./sandbox";
import { ShadowRepo } from "../checkpoints/shadow";
import { catBlobs } from "../checkpoints/stage";
import { TypeScriptServer } from "../lsp/server";
import { runRg } from "../files/rg";
import { runGit } from "../workspace/git";
import { helperSandbox } from "./helper-sandbox";
import { PtyManager } from "./pty";
import { ShellService } from "./shell";
import { opContext, tempWorkspace } from "../testing/exec";
import { loseSocketRace, type SocketRace } from "../testing/socket-race";

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
  const checkpointDir = process.env.QUIVER_CHECKPOINT_DIR;

  beforeAll(async () => {
    ws = await tempWorkspace();
    process.env.QUIVER_CHECKPOINT_DIR = `${ws.dir}-checkpoints`;
  });
  afterAll(async () => {
    if (checkpointDir === undefined) delete process.env.QUIVER_CHECKPOINT_DIR;
    else process.env.QUIVER_CHECKPOINT_DIR = checkpointDir;
    await ws.cleanup();
  });

  /** A socket that vanishes on the first start of the race's bwrap; gone with the test. */
  const race = async (): Promise<SocketRace> => {
    const r = await loseSocketRace();
    onTestFinished(() => r.dispose());
    return r;
  };
  /** The workspace's helpers (ripgrep, git, checkpoints, language server) in the race's sandbox. */
  const helpersIn = (r: SocketRace) => {
    const helpers = helperSandbox(r.sandbox, { workspace: ws.dir, hide: [] });
    ws.workspace.helpers.useSandbox(helpers.wrap);
    onTestFinished(() => helpers.dispose());
  };

  it("the warm sandbox starts again with a fresh listing, and the command runs", async () => {
    const r = await race();
    const logs: string[] = [];
    const shell = new ShellService({
      sandbox: r.sandbox,
      env: scrubEnv(process.env),
      allowNetwork: false,
      log: (line) => logs.push(line),
    });
    onTestFinished(() => shell.dispose());
    const out = await shell.run({ command: "echo ran in $PWD" }, opContext(ws.workspace));
    expect(out.output).toBe(`ran in ${ws.dir}\n`);
    expect(out.ok).toBe(true);
    expect(await r.starts()).toBe(2);
    expect(logs.join("\n")).toContain(`${r.socket} went away while the sandbox started`);
    expect(logs.join("\n")).toMatch(/bwrap: Can't (mkdir parents for|create file at) \/var\/tmp\/quiver-vanish-/);
  });

  it("a terminal opens again without showing bwrap's error", async () => {
    const r = await race();
    const sent: RunnerToServer[] = [];
    const manager = new PtyManager({
      workspaceRoot: ws.dir,
      sandbox: r.sandbox,
      env: scrubEnv({ ...process.env, PS1: "$ " }),
      send: (m) => (sent.push(m), true),
      network: false,
    });
    onTestFinished(() => manager.dispose());
    const output = () => sent.flatMap((m) => (m.type === "pty.data" ? [m.data] : [])).join("");
    manager.handle({ type: "pty.open", ptyId: "t1", sessionId: "s1", cols: 120, rows: 24 });
    manager.handle({ type: "pty.input", ptyId: "t1", data: "echo ready-$((6*7))\r" });
    const deadline = Date.now() + 20_000;
    while (!output().includes("ready-42") && Date.now() < deadline) await new Promise((res) => setTimeout(res, 50));
    expect(output()).toContain("ready-42");
    expect(output(), output()).not.toContain("bwrap:");
    expect(sent.some((m) => m.type === "pty.exit")).toBe(false);
    expect(await r.starts()).toBe(2);
  });

  it("ripgrep runs again instead of failing", async () => {
    helpersIn(await race());
    await writeFile(join(ws.dir, "needle.txt"), "a needle here\n");
    const found = await runRg(ws.workspace.helpers, ["-l", "needle", "."], {
      signal: new AbortController().signal,
      maxLines: 10,
    });
    expect(found).toMatchObject({ code: 0, lines: ["./needle.txt"] });
  });

  it("git runs again instead of failing", async () => {
    helpersIn(await race());
    const git = await runGit(ws.workspace, ["--version"]);
    expect(git.stderr).toBe("");
    expect(git).toMatchObject({ code: 0 });
    expect(git.stdout.toString()).toMatch(/^git version /);
  });

  it("the checkpoints' git runs again, and so does the cat-file stream a restore stages through", async () => {
    helpersIn({ sandbox: sandboxInfo("auto") } as SocketRace); // no race while the blob is written
    const shadow = ShadowRepo.open(ws.workspace);
    const id = (await shadow.ok(["hash-object", "-w", "--stdin"], { input: "blob body\n" })).toString().trim();
    helpersIn(await race());
    expect(await shadow.git(["version"])).toMatchObject({ code: 0, stderr: "" });
    const r = await race();
    helpersIn(r);
    const got: string[] = [];
    await catBlobs(shadow, [id, id], {
      open: (i, size) => got.push(`open ${i} ${size}`),
      data: (chunk) => got.push(chunk.toString()),
      close: (i) => got.push(`close ${i}`),
    });
    expect(got).toEqual(["open 0 10", "blob body\n", "close 0", "open 1 10", "blob body\n", "close 1"]);
    expect(await r.starts()).toBe(2);
  });

  it("the language server starts again and answers", async () => {
    helpersIn(await race());
    const logs: string[] = [];
    const server = new TypeScriptServer(ws.dir, ws.workspace.helpers, { log: (l) => logs.push(l) });
    onTestFinished(() => server.dispose());
    const found = await server.diagnostics("a.ts", "export const n: number = 'x';\n");
    expect(found).toEqual([expect.objectContaining({ line: 1, column: 14, code: 2322, severity: "error" })]);
    expect(server.starts).toBe(2);
    expect(logs.join("\n")).toMatch(/bwrap: Can't (mkdir parents for|create file at) \/var\/tmp\/quiver-vanish-/);
  }, 120_000);
});
