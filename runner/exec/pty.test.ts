// The person's terminal: real PTYs with a real shell in a temp workspace, with and without bubblewrap.
import { mkdtemp, readlink, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { RunnerToServer } from "../../server/protocol/runner";
import { listPorts } from "../preview/ports";
import { scrubEnv } from "./env";
import { PtyManager } from "./pty";
import { sandboxInfo, type SandboxMode } from "./sandbox";
import { settledProcesses, tempWorkspace } from "../testing/exec";

vi.setConfig({ testTimeout: 30_000 });

const modes: SandboxMode[] = sandboxInfo("auto").available ? ["auto", "off"] : ["off"];

describe.each(modes)("PtyManager (sandbox %s)", (mode) => {
  let ws: Awaited<ReturnType<typeof tempWorkspace>>;
  let home: string;
  let manager: PtyManager;
  let sent: RunnerToServer[];
  let online: boolean;
  beforeAll(async () => {
    ws = await tempWorkspace();
    home = await mkdtemp(join(tmpdir(), "quiver-home-"));
  });
  afterAll(async () => {
    await ws.cleanup();
    await rm(home, { recursive: true, force: true });
  });
  afterEach(() => manager?.dispose());

  const make = (graceMs = 30_000, network?: boolean) => {
    sent = [];
    online = true;
    manager = new PtyManager({
      workspaceRoot: ws.dir,
      sandbox: sandboxInfo(mode),
      env: scrubEnv({ ...process.env, HOME: home, PS1: "$ " }),
      send: (m) => (online ? (sent.push(m), true) : false),
      graceMs,
      network,
    });
    return manager;
  };
  const output = (id: string) =>
    sent
      .filter((m): m is Extract<RunnerToServer, { type: "pty.data" }> => m.type === "pty.data" && m.ptyId === id)
      .map((m) => m.data)
      .join("");
  const exitOf = (id: string) => sent.find((m) => m.type === "pty.exit" && m.ptyId === id);
  const until = async (check: () => boolean, what: string) => {
    const deadline = Date.now() + 15_000;
    while (!check()) {
      if (Date.now() > deadline)
        throw new Error(`timed out waiting for ${what}; output so far: ${JSON.stringify(sent.slice(-5))}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };

  it.runIf(mode === "auto")(
    "records a terminal without network's own namespace, where the preview names its server as sandboxed, and forgets it on close",
    async () => {
      const m = make(30_000, false);
      m.handle({ type: "pty.open", ptyId: "n1", sessionId: "s1", cols: 200, rows: 24 });
      const serve =
        "require('net').createServer().listen(0,'127.0.0.1',function(){console.log('port='+this.address().port)})";
      m.handle({ type: "pty.input", ptyId: "n1", data: `${process.execPath} -e "${serve}"\r` });
      await until(() => /port=\d+/.test(output("n1")), "the server's port");
      const port = Number(/port=(\d+)/.exec(output("n1"))![1]);
      await until(() => m.namespaces().length === 1, "the terminal's namespace");
      const [recorded] = m.namespaces();
      expect(recorded.ns).not.toBe(await readlink("/proc/self/ns/net"));
      const listed = (await listPorts({ workspace: ws.dir, self: -1, sandboxes: m.namespaces() })).find(
        (p) => p.port === port,
      );
      expect(listed).toMatchObject({ port, workspace: true, sandboxed: true, sandbox: "terminal" });
      expect(listed?.command).toContain("createServer");
      m.handle({ type: "pty.close", ptyId: "n1" });
      await until(() => exitOf("n1") !== undefined, "exit");
      expect(m.namespaces()).toEqual([]);
      // A terminal with network shares the workspace's namespace, which the preview reaches: no record.
      const open = make();
      open.handle({ type: "pty.open", ptyId: "n2", sessionId: "s1", cols: 80, rows: 24 });
      open.handle({ type: "pty.input", ptyId: "n2", data: "echo ready-$((1+1))\r" });
      await until(() => output("n2").includes("ready-2"), "the shell");
      await new Promise((r) => setTimeout(r, 300));
      expect(open.namespaces()).toEqual([]);
    },
  );

  it("round-trips input and output in the workspace, and resizes", async () => {
    const m = make();
    m.handle({ type: "pty.open", ptyId: "p1", sessionId: "s1", cols: 80, rows: 24 });
    m.handle({ type: "pty.input", ptyId: "p1", data: "echo hi-$((40+2)); pwd\r" });
    await until(() => output("p1").includes("hi-42"), "echo output");
    await until(() => output("p1").includes(ws.dir), "pwd");
    m.handle({ type: "pty.resize", ptyId: "p1", cols: 101, rows: 33 });
    m.handle({ type: "pty.input", ptyId: "p1", data: "stty size\r" });
    await until(() => output("p1").includes("33 101"), "new size");
    m.handle({ type: "pty.input", ptyId: "p1", data: "exit 7\r" });
    await until(() => exitOf("p1") !== undefined, "exit");
    expect(exitOf("p1")).toMatchObject({ exitCode: 7 });
    expect(m.size).toBe(0);
  });

  // The terminal's leader starts the shell as a background job, which a non-interactive bash
  // starts with SIGINT and SIGQUIT ignored; every command would inherit that and Ctrl+C would
  // stop nothing (a dev server in the preview could not be stopped).
  it("Ctrl+C interrupts the running command, and no command starts with SIGINT ignored", async () => {
    const m = make();
    m.handle({ type: "pty.open", ptyId: "pc", sessionId: "s1", cols: 80, rows: 24 });
    m.handle({ type: "pty.input", ptyId: "pc", data: "grep SigIgn /proc/self/status; sleep 60\r" });
    await until(() => /SigIgn:\s+[0-9a-f]+/.test(output("pc")), "the signal mask");
    const mask = BigInt("0x" + /SigIgn:\s+([0-9a-f]+)/.exec(output("pc"))![1]);
    expect(mask & (1n << 1n), "SIGINT ignored").toBe(0n);
    expect(mask & (1n << 2n), "SIGQUIT ignored").toBe(0n);
    await new Promise((r) => setTimeout(r, 300));
    m.handle({ type: "pty.input", ptyId: "pc", data: "\x03" });
    m.handle({ type: "pty.input", ptyId: "pc", data: "echo after-$?\r" });
    // 130: the sleep died of SIGINT (a sleep that ignored it would still hold the line).
    await until(() => output("pc").includes("after-130"), "sleep interrupted by Ctrl+C");
  });

  it("kills the whole process tree on close", async () => {
    const m = make();
    const t = `${777 + Math.random()}`.slice(0, 9);
    m.handle({ type: "pty.open", ptyId: "p2", sessionId: "s1", cols: 80, rows: 24 });
    m.handle({ type: "pty.input", ptyId: "p2", data: `(sleep ${t}1 &); setsid sleep ${t}2 & echo started\r` });
    await until(() => output("p2").includes("started\r\n"), "background jobs");
    m.handle({ type: "pty.close", ptyId: "p2" });
    await until(() => exitOf("p2") !== undefined, "exit after close");
    expect(await settledProcesses(t)).toEqual([]);
  });

  it("keeps output while the server is away, replays it on re-attach, and closes after the grace period", async () => {
    const m = make(1500);
    m.handle({ type: "pty.open", ptyId: "p3", sessionId: "s1", cols: 80, rows: 24 });
    m.handle({ type: "pty.input", ptyId: "p3", data: "echo ready\r" });
    await until(() => output("p3").includes("ready\r\n"), "ready");
    online = false;
    m.connectionChanged(false);
    m.handle({ type: "pty.input", ptyId: "p3", data: "echo while-away\r" });
    await new Promise((r) => setTimeout(r, 300));
    online = true;
    m.connectionChanged(true);
    m.handle({ type: "pty.open", ptyId: "p3", sessionId: "s1", cols: 90, rows: 30 });
    await until(() => output("p3").includes("while-away\r\n"), "replayed output");

    m.connectionChanged(false);
    await until(() => exitOf("p3") !== undefined || (!online && m.size === 0), "grace close");
    expect(m.size).toBe(0);
  });

  it("answers a close of an unknown PTY and refuses a foreign session's re-attach", async () => {
    const m = make();
    m.handle({ type: "pty.close", ptyId: "nope" });
    await until(() => exitOf("nope") !== undefined, "an answer for an unknown PTY");
    expect(exitOf("nope")).toMatchObject({ exitCode: null, signal: "not open" });
    m.handle({ type: "pty.open", ptyId: "p4", sessionId: "s1", cols: 80, rows: 24 });
    m.handle({ type: "pty.open", ptyId: "p4", sessionId: "other", cols: 80, rows: 24 });
    m.handle({ type: "pty.input", ptyId: "p4", data: "echo still-mine\r" });
    await until(() => output("p4").includes("still-mine\r\n"), "own session output");
    expect(m.size).toBe(1);
  });
});
