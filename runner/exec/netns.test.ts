// The workspace's network namespace, with real processes: bubblewrap, slirp4netns, a real PTY,
// the preview's real relay, and real servers on the host's loopback that a command or terminal
// granted network must NOT reach (Quiver's port, PostgreSQL and the like live there). Every
// connection to a host address is made from inside the sandbox; the test itself only connects
// to loopback. No outbound-internet checks: CI's network is restricted.
import { createServer, type Server } from "node:http";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { networkInterfaces, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { PreviewRunnerFrame } from "../../server/protocol/preview";
import type { RunnerToServer } from "../../server/protocol/runner";
import { listPorts } from "../preview/ports";
import { previewHandler } from "../preview";
import { scrubEnv } from "./env";
import { namespaceResolvConf, WorkspaceNetwork } from "./netns";
import { PtyManager } from "./pty";
import { findOnPath, sandboxInfo } from "./sandbox";
import { ShellService } from "./shell";
import { opContext, tempWorkspace } from "../testing/exec";
import { probe } from "../testing/net-probe";

vi.setConfig({ testTimeout: 60_000 });

const ready =
  sandboxInfo("auto").available && !!findOnPath("slirp4netns") && !!findOnPath("unshare") && !!findOnPath("nsenter");
if (!ready) console.warn("netns tests skipped: they need bubblewrap, slirp4netns, unshare and nsenter");

/** The host's own non-loopback addresses (tried from inside the sandbox only). */
const hostAddresses = () =>
  Object.values(networkInterfaces())
    .flat()
    .filter((a) => a && !a.internal && !a.address.startsWith("fe80"))
    .map((a) => a!.address);

describe.runIf(ready)("workspace network namespace (bubblewrap + slirp4netns)", () => {
  let ws: Awaited<ReturnType<typeof tempWorkspace>>;
  let home: string;
  let network: WorkspaceNetwork;
  let shell: ShellService;
  let pty: PtyManager;
  const sent: RunnerToServer[] = [];
  const hosts: Server[] = [];
  let port4: number;
  let port6: number;
  const logs: string[] = [];

  const listen = async (host: string) => {
    const s = createServer((_req, res) => res.end("host-loopback-reached"));
    await new Promise<void>((r) => s.listen(0, host, r));
    hosts.push(s);
    return (s.address() as { port: number }).port;
  };

  beforeAll(async () => {
    ws = await tempWorkspace();
    home = await mkdtemp(join(tmpdir(), "quiver-netns-home-"));
    port4 = await listen("127.0.0.1");
    port6 = await listen("::1").catch(() => port4);
    network = new WorkspaceNetwork({ sandboxed: true, hostNetwork: false, log: (l) => logs.push(l) });
    const env = scrubEnv({ ...process.env, HOME: home, PS1: "$ " });
    shell = new ShellService({ sandbox: sandboxInfo("auto"), env, allowNetwork: true, network });
    pty = new PtyManager({
      workspaceRoot: ws.dir,
      sandbox: sandboxInfo("auto"),
      env,
      send: (m) => (sent.push(m), true),
      workspaceNetwork: network,
    });
  });
  afterAll(async () => {
    await pty?.dispose();
    await shell?.dispose();
    await network?.dispose();
    for (const s of hosts) s.close();
    await rm(home, { recursive: true, force: true });
    await ws?.cleanup();
  });

  const run = async (command: string, extra: { yield_time_ms?: number } = {}) => {
    const r = await shell.run({ command, network: true, ...extra }, opContext(ws.workspace));
    return r.output;
  };
  const ptyOutput = (id: string) =>
    sent
      .filter((m): m is Extract<RunnerToServer, { type: "pty.data" }> => m.type === "pty.data" && m.ptyId === id)
      .map((m) => m.data)
      .join("");
  const until = async (check: () => boolean | Promise<boolean>, what: string, ms = 20_000) => {
    const deadline = Date.now() + ms;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const targets = () => [
    `127.0.0.1:${port4}`,
    `::1:${port6}`,
    `localhost:${port4}`,
    `127.0.0.2:${port4}`,
    `0.0.0.0:${port4}`,
    `10.0.2.2:${port4}`, // slirp4netns's gateway, which is the host's loopback unless disabled
    `10.0.2.3:${port4}`,
    ...hostAddresses().map((a) => `${a}:${port4}`),
    "127.0.0.1:5432", // PostgreSQL, trust auth on this kind of machine
  ];

  it("the test's own host servers answer on the host's loopback (so a refusal below means something)", async () => {
    const r = await fetch(`http://127.0.0.1:${port4}/`);
    expect(await r.text()).toBe("host-loopback-reached");
  });

  it("a command granted network reaches none of the host's loopback services, by any address", async () => {
    const out = await run(
      `${probe(targets())}\ncurl -sS --max-time 3 http://127.0.0.1:${port4}/ http://localhost:${port4}/ 2>&1; echo curl=$?`,
    );
    for (const t of targets()) expect(out, out).toContain(`CLOSED ${t}`);
    expect(out).not.toContain("OPEN");
    expect(out).not.toContain("host-loopback-reached");
    expect(out).toMatch(/curl=[1-9]/);
    // It does have a network of its own: slirp4netns's tap device with the usual address.
    expect(
      await run(
        "cat /proc/net/route | awk 'NR>1 {print $1}' | sort -u; ip -4 addr show tap0 2>/dev/null | grep -o '10.0.2.100' || grep -c tap0 /proc/net/dev",
      ),
    ).toMatch(/tap0/);
  });

  it("a command granted network reaches no cloud metadata service (the host's credentials), and cannot lift the block", async () => {
    const out = await run(
      `ip route get 169.254.169.254 2>&1; ip route del blackhole 169.254.0.0/16 2>&1; echo del=$?\n${probe(["169.254.169.254:80", "100.100.100.200:80"])}`,
    );
    expect(out, out).not.toMatch(/169\.254\.169\.254 via/); // no route out through slirp4netns
    expect(out).toMatch(/Operation not permitted[^]*del=2/); // the route is there, and stays
    expect(out).toContain("CLOSED 169.254.169.254:80");
    expect(out).toContain("CLOSED 100.100.100.200:80");
  });

  it("the terminal reaches none of them either", async () => {
    pty.handle({ type: "pty.open", ptyId: "t1", sessionId: "s1", cols: 120, rows: 40 });
    pty.handle({
      type: "pty.input",
      ptyId: "t1",
      data: `${probe(targets()).replaceAll("\n", "; ")}; echo probe-""done\r`,
    });
    await until(() => ptyOutput("t1").includes("probe-done\r\n"), "the terminal's probe");
    const out = ptyOutput("t1");
    for (const t of targets()) expect(out, out).toContain(`CLOSED ${t}`);
    expect(out).not.toMatch(/OPEN \S/);
  });

  it("a server started in the terminal is reached by a command, listed, and previewed; one started by a command is reached by the terminal", async () => {
    pty.handle({ type: "pty.open", ptyId: "t2", sessionId: "s1", cols: 120, rows: 40 });
    const appPort = port4; // the same number as the host's server: the namespace is another network
    pty.handle({
      type: "pty.input",
      ptyId: "t2",
      data: `mkdir -p site && echo from-the-terminal > site/index.html && cd site && python3 -m http.server ${appPort} --bind 127.0.0.1\r`,
    });
    await until(
      async () =>
        (await run(`curl -sS --max-time 2 http://127.0.0.1:${appPort}/index.html || true`)).includes(
          "from-the-terminal",
        ),
      "the terminal's server from a command",
    );

    const listed = await listPorts({ workspace: ws.dir, namespace: await network.procNet(), exclude: [] });
    expect(listed.find((p) => p.port === appPort)).toMatchObject({
      workspace: true,
      address: "127.0.0.1",
      command: expect.stringContaining("python3 -m http.server"),
    });

    const frames: PreviewRunnerFrame[] = [];
    const handler = previewHandler((f) => (frames.push(f), true), network);
    handler.handle({
      type: "preview.request",
      streamId: "p1",
      sessionId: "s1",
      port: appPort,
      method: "GET",
      path: "/index.html",
      headers: [],
      hasBody: false,
      deadline: Date.now() + 10_000,
    });
    await until(() => frames.some((f) => f.type === "preview.end"), "the preview's answer");
    const body = frames
      .filter((f): f is Extract<PreviewRunnerFrame, { type: "preview.data" }> => f.type === "preview.data")
      .map((f) => Buffer.from(f.data, "base64").toString())
      .join("");
    expect(frames.find((f) => f.type === "preview.head")).toMatchObject({ status: 200 });
    expect(body).toContain("from-the-terminal");

    // The other way: a command's background server, reached from the terminal.
    const cmdPort = appPort + 1 > 65535 ? appPort - 1 : appPort + 1;
    await run(`cd site && (python3 -m http.server ${cmdPort} --bind 127.0.0.1 >/dev/null 2>&1 &) ; sleep 60`, {
      yield_time_ms: 300,
    });
    pty.handle({ type: "pty.open", ptyId: "t3", sessionId: "s1", cols: 120, rows: 40 });
    await until(() => {
      pty.handle({
        type: "pty.input",
        ptyId: "t3",
        data: `curl -sS --max-time 2 http://127.0.0.1:${cmdPort}/index.html | sed 's/^/got-/'\r`,
      });
      return new Promise((r) => setTimeout(() => r(ptyOutput("t3").includes("got-from-the-terminal")), 500));
    }, "the command's server from the terminal");
  });

  it("a relay that died is started again inside the namespace, and the terminal's server is still listed and previewed", async () => {
    const before = Number(/^\/proc\/(\d+)\/net$/.exec((await network.procNet())!)![1]);
    process.kill(before, "SIGKILL");
    await until(
      async () => (await readFile(`/proc/${before}/stat`, "utf8").catch(() => " Z ")).includes(" Z "),
      "the relay to die",
    );
    await new Promise((r) => setTimeout(r, 100)); // its exit event
    const listed = await listPorts({ workspace: ws.dir, namespace: await network.procNet(), exclude: [] });
    expect(listed.find((p) => p.port === port4)).toMatchObject({ workspace: true });
    const frames: PreviewRunnerFrame[] = [];
    previewHandler((f) => (frames.push(f), true), network).handle({
      type: "preview.request",
      streamId: "p3",
      sessionId: "s1",
      port: port4,
      method: "GET",
      path: "/index.html",
      headers: [],
      hasBody: false,
      deadline: Date.now() + 10_000,
    });
    await until(() => frames.some((f) => f.type === "preview.end"), "the preview's answer");
    expect(frames.find((f) => f.type === "preview.head")).toMatchObject({ status: 200 });
  });

  it("the preview still reaches a server outside the sandbox when nothing of the workspace holds that port", async () => {
    const frames: PreviewRunnerFrame[] = [];
    const handler = previewHandler((f) => (frames.push(f), true), network);
    const outside = await listen("127.0.0.1");
    handler.handle({
      type: "preview.request",
      streamId: "p2",
      sessionId: "s1",
      port: outside,
      method: "GET",
      path: "/",
      headers: [],
      hasBody: false,
      deadline: Date.now() + 10_000,
    });
    await until(() => frames.some((f) => f.type === "preview.end"), "the preview's answer");
    expect(frames.find((f) => f.type === "preview.head")).toMatchObject({ status: 200 });
  });

  it("is one namespace, one relay and one slirp4netns for every command and terminal", () => {
    expect(logs.filter((l) => l.includes("workspace network namespace up"))).toHaveLength(1);
  });

  it("a resolver on the host's loopback (systemd-resolved) becomes slirp4netns's forwarder inside", async () => {
    // In the workspace, so a sandbox without network (private /tmp) sees the file too.
    const hostConf = join(ws.dir, "host-resolv.conf");
    await writeFile(hostConf, "# stub\nnameserver 127.0.0.53\noptions edns0 trust-ad\nsearch lan\n");
    const own = new WorkspaceNetwork({ sandboxed: true, hostNetwork: false, log: () => {}, resolvConf: hostConf });
    const sh = new ShellService({
      sandbox: sandboxInfo("auto"),
      env: scrubEnv({ ...process.env, HOME: home }),
      allowNetwork: true,
      network: own,
    });
    try {
      const r = await sh.run({ command: `cat ${hostConf}`, network: true }, opContext(ws.workspace));
      expect(r.output).toContain("nameserver 10.0.2.3\noptions edns0 trust-ad\nsearch lan");
      expect(r.output).not.toContain("127.0.0.53");
      // Commands without network keep the host's file: they resolve nothing anyway.
      expect((await sh.run({ command: `cat ${hostConf}` }, opContext(ws.workspace))).output).toContain("127.0.0.53");
    } finally {
      await sh.dispose();
      await own.dispose();
      await rm(hostConf, { force: true });
    }
    expect(namespaceResolvConf("/nonexistent/resolv.conf", tmpdir())).toBeUndefined();
  });
});

describe.runIf(sandboxInfo("auto").available)("workspace network without slirp4netns or by choice", () => {
  it("without slirp4netns: no outbound network, said plainly, and commands asking for it are refused", async () => {
    const saved = process.env.PATH;
    const ws = await tempWorkspace();
    // A PATH without slirp4netns but with everything else the sandbox needs.
    const bin = await mkdtemp(join(tmpdir(), "quiver-noslirp-"));
    const { symlinkSync } = await import("node:fs");
    for (const tool of ["bwrap", "unshare", "nsenter", "setpriv", "bash", "env"]) {
      const at = findOnPath(tool);
      if (at) symlinkSync(at, join(bin, tool));
    }
    process.env.PATH = bin;
    let network: WorkspaceNetwork;
    try {
      network = new WorkspaceNetwork({ sandboxed: true, hostNetwork: false, log: () => {} });
    } finally {
      process.env.PATH = saved;
    }
    expect(network.mode).toBe("none");
    expect(network.reason).toMatch(/slirp4netns is not installed/);
    const shell = new ShellService({
      sandbox: sandboxInfo("auto"),
      env: scrubEnv(process.env),
      allowNetwork: true,
      network,
    });
    const r = await shell.run({ command: "true", network: true }, opContext(ws.workspace));
    expect(r.ok).toBe(false);
    expect(r.output).toMatch(/unavailable on this runner: slirp4netns is not installed/);
    await shell.dispose();
    await network.dispose();
    await rm(bin, { recursive: true, force: true });
    await ws.cleanup();
  });

  it("the host's network only by explicit choice, and then it says so", () => {
    expect(new WorkspaceNetwork({ sandboxed: true, hostNetwork: true, log: () => {} })).toMatchObject({
      mode: "host",
      reason: expect.stringMatching(/QUIVER_SANDBOX_HOST_NETWORK=1/),
    });
    expect(new WorkspaceNetwork({ sandboxed: true, hostNetwork: false, log: () => {} }).mode).not.toBe("host");
  });
});
