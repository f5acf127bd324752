// The shell op on real processes and real temp workspaces, with and without bubblewrap.
import { createServer, type Server } from "node:http";
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";

// Real processes on a shared 2-core machine: generous per-test ceiling, no timing assertions.
vi.setConfig({ testTimeout: 30_000 });
import { ShellResultMeta, type ShellInput } from "../../server/protocol/exec-ops";
import type { Workspace } from "../workspace/workspace";
import { scrubEnv } from "./env";
import { sandboxInfo, type SandboxMode } from "./sandbox";
import { ShellService } from "./shell";
import { opContext, processesMatching, settledProcesses, tempWorkspace } from "../testing/exec";

const bwrap = sandboxInfo("auto").available;
const modes: SandboxMode[] = bwrap ? ["auto", "off"] : ["off"];
let unique = 100;
const tag = () => `${900 + Math.random()}`.slice(0, 9) + `${unique++}`;
// An empty HOME keeps the machine's own login profile (slow, noisy) out of the assertions.
let home: string;
beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), "quiver-home-"));
});
afterAll(() => rm(home, { recursive: true, force: true }));
const baseEnv = (extra: Record<string, string> = {}) => scrubEnv({ ...process.env, HOME: home, ...extra });

describe.each(modes)("shell (sandbox %s)", (mode) => {
  let ws: Awaited<ReturnType<typeof tempWorkspace>>;
  let shell: ShellService;
  beforeAll(async () => {
    ws = await tempWorkspace();
  });
  afterAll(() => ws.cleanup());
  afterEach(() => shell?.dispose());

  const make = (extra: Record<string, string> = {}, allow: string[] = []) =>
    (shell = new ShellService({
      sandbox: sandboxInfo(mode),
      env: scrubEnv({ ...process.env, HOME: home, ...extra }, { allow }),
      allowNetwork: true,
    }));
  const run = async (input: ShellInput, workspace: Workspace = ws.workspace, ctx = opContext(workspace)) => {
    const r = await shell.run(input, ctx);
    return { ...r, meta: r.meta ? ShellResultMeta.parse(r.meta) : undefined };
  };

  it("runs bash -lc in the workspace and reports exit code, stdout and stderr", async () => {
    make();
    const r = await run({ command: "pwd; echo out; echo err >&2; exit 3" });
    expect(r.ok).toBe(true);
    expect(r.output).toContain(ws.dir);
    expect(r.output).toContain("out");
    expect(r.output).toContain("err");
    expect(r.meta).toMatchObject({ exitCode: 3, running: false, stopReason: null, sandboxed: mode === "auto" });
  });

  it("gives the command /dev/null as stdin", async () => {
    make();
    const r = await run({ command: "cat; echo done" });
    expect(r.output.trim()).toBe("done");
  });

  it("kills the whole tree on timeout, including (sleep &) and setsid children", async () => {
    make();
    const t = tag();
    const r = await run({ command: `(sleep ${t}1 &); setsid sleep ${t}2 & sleep ${t}3`, timeout_ms: 700 });
    expect(r.meta).toMatchObject({ running: false, stopReason: "timeout" });
    expect(await settledProcesses(t)).toEqual([]);
  });

  it("kills the whole tree when the call is cancelled", async () => {
    make();
    const t = tag();
    const abort = new AbortController();
    setTimeout(() => abort.abort(), 500);
    const r = await run(
      { command: `setsid sleep ${t}1 & (sleep ${t}2 &); sleep ${t}3` },
      ws.workspace,
      opContext(ws.workspace, { signal: abort.signal }),
    );
    expect(r.meta?.stopReason).toBe("cancelled");
    expect(await settledProcesses(t)).toEqual([]);
  });

  it("leaves no background process behind when the command exits normally", async () => {
    make();
    const t = tag();
    const r = await run({
      command: `(sleep ${t}1 >/dev/null 2>&1 &); setsid sleep ${t}2 >/dev/null 2>&1 & echo started`,
    });
    expect(r.output).toContain("started");
    expect(r.meta?.exitCode).toBe(0);
    expect(await settledProcesses(t)).toEqual([]);
  });

  it("yields partial output, then a poll reads the rest and the exit", async () => {
    make();
    const r1 = await run({
      command: "echo one; while [ ! -e go ]; do sleep 0.05; done; echo two; sleep 0.2; echo three; exit 4",
      yield_time_ms: 1500,
    });
    expect(r1.meta?.running).toBe(true);
    expect(r1.output).toContain("one");
    expect(r1.output).not.toContain("two");
    const handle = r1.meta!.sessionHandle!;
    expect(handle).toMatch(/^sh_/);

    const other = await run({ session_id: handle }, ws.workspace, opContext(ws.workspace, { sessionId: "s2" }));
    expect(other.ok).toBe(false);

    await writeFile(join(ws.dir, "go"), "");
    const r2 = await run({ session_id: handle, yield_time_ms: 10_000 });
    expect(r2.output).toContain("two");
    expect(r2.output).toContain("three");
    expect(r2.output).not.toContain("one");
    expect(r2.meta).toMatchObject({ running: false, exitCode: 4 });

    const r3 = await run({ session_id: handle });
    expect(r3.ok).toBe(false);
    expect(r3.output).toMatch(/no command with session_id/);
  });

  it("kills a yielded command on request", async () => {
    make();
    const t = tag();
    const r1 = await run({ command: `echo go; (sleep ${t}1 &); sleep ${t}2`, yield_time_ms: 300 });
    expect(r1.meta?.running).toBe(true);
    const r2 = await run({ session_id: r1.meta!.sessionHandle!, kill: true });
    expect(r2.meta).toMatchObject({ running: false, stopReason: "killed" });
    expect(await settledProcesses(t)).toEqual([]);
    expect(shell.runningCount).toBe(0);
  });

  it("ends a deleted session's commands, its children too, and leaves another session's running", async () => {
    make();
    const t = tag();
    const mine = await run({ command: `echo go; (sleep ${t}1 &); sleep ${t}2`, yield_time_ms: 300 });
    const theirs = await run(
      { command: `echo go; sleep ${t}3`, yield_time_ms: 300 },
      ws.workspace,
      opContext(ws.workspace, { sessionId: "s2" }),
    );
    expect([mine.meta?.running, theirs.meta?.running]).toEqual([true, true]);
    const ended = await shell.endSessionOp.run({}, opContext(ws.workspace));
    expect(ended).toMatchObject({ ok: true, output: "1 command(s) stopped" });
    expect(await settledProcesses(`${t}1`)).toEqual([]);
    expect(await settledProcesses(`${t}2`)).toEqual([]);
    expect((await processesMatching(`sleep ${t}3`)).length).toBeGreaterThan(0);
    // Forgotten, not kept to be read: its handle is gone.
    expect((await run({ session_id: mine.meta!.sessionHandle! })).output).toMatch(/no command with session_id/);
    expect(shell.runningCount).toBe(1);
  });

  it("streams output as progress", async () => {
    make();
    const chunks: string[] = [];
    // "b" waits until the test has been handed "a": two chunks however slow the machine is.
    const name = `progress-go-${tag()}`; // not the "go" an earlier case leaves behind
    const go = join(ws.dir, name);
    await run(
      { command: `echo a; until [ -e ${name} ]; do sleep 0.02; done; echo b` },
      ws.workspace,
      opContext(ws.workspace, {
        progress: (c) => {
          chunks.push(c);
          if (c.includes("a")) void writeFile(go, "");
        },
      }),
    );
    await rm(go, { force: true });
    expect(chunks.join("")).toBe("a\nb\n");
    expect(chunks.length).toBeGreaterThanOrEqual(2);
  });

  it("caps the bytes returned, keeping head and tail", async () => {
    make();
    const r = await run({
      command: "echo START; head -c 300000 /dev/zero | tr '\\0' x; echo; echo END",
      max_output_bytes: 10_000,
    });
    expect(r.output.startsWith("START")).toBe(true);
    expect(r.output.trimEnd().endsWith("END")).toBe(true);
    expect(r.output.length).toBeLessThan(10_200);
    expect(r.meta!.omittedBytes).toBeGreaterThan(280_000);
    expect(r.meta!.totalBytes).toBeGreaterThan(300_000);
  });

  it("scrubs secret-looking variables and Quiver's own settings unless allow-listed", async () => {
    make(
      {
        MY_API_KEY: "k1",
        GITHUB_TOKEN: "t1",
        DB_PASSWORD: "p1",
        AWS_SECRET_ACCESS_KEY: "s1",
        DATABASE_URL: "postgres://app:hunter2@db/app",
        KEEP_TOKEN: "kept",
        PLAIN: "visible",
        SITE_URL: "https://example.com/x",
        // Quiver's own settings: where its MCP configuration (servers' tokens) and data are.
        QUIVER_MCP_CONFIG: "/etc/quiver/mcp.json",
        QUIVER_DATA_DIR: "/srv/quiver",
        QUIVER_SANDBOX_HIDE: "/srv/quiver",
      },
      ["KEEP_TOKEN"],
    );
    const r = await run({ command: "env" });
    expect(r.output).toContain("PLAIN=visible");
    expect(r.output).toContain("KEEP_TOKEN=kept");
    expect(r.output).toContain("SITE_URL=https://example.com/x");
    for (const secret of [
      "MY_API_KEY",
      "GITHUB_TOKEN",
      "DB_PASSWORD",
      "AWS_SECRET_ACCESS_KEY",
      "DATABASE_URL",
      "hunter2",
      "QUIVER_MCP_CONFIG",
      "mcp.json",
      "QUIVER_DATA_DIR",
      "QUIVER_SANDBOX_HIDE",
    ]) {
      expect(r.output).not.toContain(secret);
    }
  });

  it("refuses a cwd outside the workspace and runs in one inside", async () => {
    make();
    const bad = await run({ command: "pwd", cwd: "../" });
    expect(bad.ok).toBe(false);
    await run({ command: "mkdir -p sub/dir" });
    const good = await run({ command: "pwd", cwd: "sub/dir" });
    expect(good.output.trim()).toBe(join(ws.dir, "sub/dir"));
  });
});

describe.runIf(bwrap)("shell sandbox (bubblewrap)", () => {
  let ws: Awaited<ReturnType<typeof tempWorkspace>>;
  let outside: string;
  let server: Server;
  let port: number;
  let shell: ShellService;
  beforeAll(async () => {
    shell = new ShellService({ sandbox: sandboxInfo("auto"), env: baseEnv(), allowNetwork: true });
    ws = await tempWorkspace();
    outside = await mkdtemp(join(tmpdir(), "quiver-outside-"));
    server = createServer((_req, res) => res.end("reached"));
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    port = (server.address() as { port: number }).port;
  });
  afterAll(async () => {
    await shell.dispose();
    server.close();
    await rm(outside, { recursive: true, force: true });
    await ws.cleanup();
  });
  const run = (input: ShellInput) => shell.run(input, opContext(ws.workspace));

  it("writes inside the workspace but nowhere else", async () => {
    const r = await run({
      command: `echo ok > inside.txt && cat inside.txt; echo bad > ${outside}/f.txt; echo bad > /usr/quiver-test`,
    });
    expect(r.output).toContain("ok");
    expect(r.output).toMatch(/Read-only file system/);
    expect(existsSync(join(ws.dir, "inside.txt"))).toBe(true);
    expect(existsSync(join(outside, "f.txt"))).toBe(false);
    expect(existsSync("/usr/quiver-test")).toBe(false);
  });

  it("cannot be undone from inside, even by root: no remount writable, and its own mounts stay its own", async () => {
    const r = await run({
      command: `mount -o remount,rw / ; echo remount=$?; echo bad > /usr/quiver-test; echo write=$?; mount -t tmpfs none /usr && echo bad > /usr/quiver-test; echo private=$?`,
    });
    expect(r.output).toMatch(/remount=[1-9]/);
    expect(r.output).toMatch(/write=[1-9]/);
    expect(existsSync("/usr/quiver-test")).toBe(false); // a tmpfs it mounted over /usr is only in its namespace
  });

  it("has a private /tmp and sees only its own processes", async () => {
    const r = await run({ command: `ls /proc | grep -c '^[0-9]'; ls -A /tmp` });
    const [procCount, ...inTmp] = r.output.trim().split("\n");
    expect(Number(procCount)).toBeLessThan(10);
    // only the mount points of what is bound in: the workspace, and Quiver itself when it lives in /tmp
    const mountPoints = [ws.dir, fileURLToPath(new URL("../..", import.meta.url))]
      .filter((p) => p.startsWith("/tmp/"))
      .map((p) => p.split("/")[2]);
    for (const entry of inTmp.filter(Boolean)) expect(mountPoints).toContain(entry);
  });

  it("has no network unless the call is granted it, and granted network is not the host's loopback", async () => {
    const probe = `exec 3<>/dev/tcp/127.0.0.1/${port} && printf 'GET / HTTP/1.0\\r\\n\\r\\n' >&3 && cat <&3`;
    const denied = await run({ command: probe });
    expect(denied.output).not.toContain("reached");
    expect((denied.meta as ShellResultMeta).exitCode).not.toBe(0);
    // The workspace's own namespace (netns.test.ts): the host's loopback servers are not in it.
    const allowed = await run({ command: probe, network: true });
    expect(allowed.output).not.toContain("reached");
    expect(allowed.output).toMatch(/Connection refused/);
  });

  it("refuses network when the runner disables it", async () => {
    const strict = new ShellService({ sandbox: sandboxInfo("auto"), env: {}, allowNetwork: false });
    const r = await strict.run({ command: "true", network: true }, opContext(ws.workspace));
    expect(r.ok).toBe(false);
    expect(r.output).toMatch(/network access for commands is disabled/);
  });
});
