// The host's Unix sockets from inside the sandbox: a real socket server on the host, outside
// /tmp and the workspace (where a database's or Docker's would be), must refuse a sandboxed
// command with network or without, and so must an abstract socket (the sandbox's network
// namespace is never the host's); one in the workspace stays the workspace's. Also the
// machine's real PostgreSQL socket, when there is one (trust auth on this kind of machine).
import { exec, spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { scrubEnv } from "./env";
import { parseProcNetUnix } from "./host-sockets";
import { sandboxInfo } from "./sandbox";
import { ShellService } from "./shell";
import { opContext, tempWorkspace } from "../testing/exec";

vi.setConfig({ testTimeout: 60_000 });
const execAsync = promisify(exec);

/** A Python probe; a leading "@" names an abstract socket (they belong to a network namespace). */
const connect = (path: string) =>
  `python3 -c 'import socket,sys
s=socket.socket(socket.AF_UNIX)
s.settimeout(3)
p=sys.argv[1]
try:
  s.connect("\\0"+p[1:] if p.startswith("@") else p); print("CONNECTED", end=" ", flush=True); print(s.recv(100).decode())
except OSError as e:
  print("REFUSED", e.strerror)' '${path}'`;

describe("parseProcNetUnix", () => {
  it("takes filesystem paths (spaces included), not abstract or unnamed sockets", () => {
    const text = [
      "Num       RefCount Protocol Flags    Type St Inode Path",
      "0000000000000000: 00000002 00000000 00010000 0001 01 20504 /run/postgresql/.s.PGSQL.5432",
      "0000000000000000: 00000002 00000000 00010000 0001 01 20505 @/tmp/.X11-unix/X0",
      "0000000000000000: 00000003 00000000 00000000 0001 03 20506",
      "0000000000000000: 00000002 00000000 00010000 0001 01 20507 /srv/my app/sock et",
    ].join("\n");
    expect(parseProcNetUnix(text)).toEqual(["/run/postgresql/.s.PGSQL.5432", "/srv/my app/sock et"]);
  });
});

describe.runIf(sandboxInfo("auto").available)("the host's Unix sockets in the sandbox", () => {
  let ws: Awaited<ReturnType<typeof tempWorkspace>>;
  let dir: string;
  const servers: Server[] = [];
  let shell: ShellService;
  const abstract = `quiver-test-${process.pid}`;
  let abstractServer: ChildProcess | undefined;
  const serve = async (path: string) => {
    const s = createServer((c) => c.on("error", () => {}).end("host-socket-reached"));
    await new Promise<void>((r) => s.listen(path, r));
    servers.push(s);
  };
  beforeAll(async () => {
    ws = await tempWorkspace();
    // Not under /tmp: the sandbox has a /tmp of its own, which would hide it anyway.
    dir = await mkdtemp("/var/tmp/quiver-sockets-");
    await serve(join(dir, "service.sock"));
    await serve(join(ws.dir, "app.sock"));
    // Python, not Node: Node 20 binds an abstract name padded with NULs to the full address size.
    abstractServer = spawn("python3", [
      "-c",
      `import socket
s=socket.socket(socket.AF_UNIX); s.bind("\\0${abstract}"); s.listen(8); print("ready", flush=True)
while True:
  c,_=s.accept(); c.sendall(b"host-socket-reached"); c.close()`,
    ]);
    await new Promise((r) => abstractServer!.stdout!.once("data", r));
    shell = new ShellService({ sandbox: sandboxInfo("auto"), env: scrubEnv(process.env), allowNetwork: true });
  });
  afterAll(async () => {
    await shell?.dispose();
    for (const s of servers) s.close();
    abstractServer?.kill("SIGKILL");
    await rm(dir, { recursive: true, force: true });
    await ws?.cleanup();
  });
  const run = async (command: string, network: boolean) =>
    (await shell.run({ command, network }, opContext(ws.workspace))).output;

  it.each([false, true])("a host service's socket refuses a command (network %s)", async (network) => {
    const out = await run(connect(join(dir, "service.sock")), network);
    expect(out).toContain("REFUSED");
    expect(out).not.toContain("host-socket-reached");
  });

  it("outside the sandbox both answer (so a refusal below is the sandbox's doing)", async () => {
    for (const path of [join(dir, "service.sock"), `@${abstract}`])
      expect((await execAsync(connect(path))).stdout).toContain("CONNECTED host-socket-reached");
  });

  it.each([false, true])("a host service's abstract socket refuses a command (network %s)", async (network) => {
    expect(await run(connect(`@${abstract}`), network)).toContain("REFUSED");
  });

  it.each([false, true])(
    "a socket whose server lives in another network namespace refuses a command (network %s)",
    async (network) => {
      // As a container whose socket folder is mounted on the host: the socket is in that
      // namespace's table only, and a connect() by path reaches it from anywhere.
      const path = join(dir, `other-netns-${network}.sock`);
      let fresh: ShellService | undefined;
      const other = spawn("unshare", [
        "--net",
        "python3",
        "-c",
        `import socket
s=socket.socket(socket.AF_UNIX); s.bind(${JSON.stringify(path)}); s.listen(8); print("ready", flush=True)
while True:
  c,_=s.accept(); c.sendall(b"host-socket-reached"); c.close()`,
      ]);
      try {
        const ready = await new Promise<boolean>((r) => {
          other.stdout!.once("data", () => r(true));
          other.once("exit", () => r(false));
        });
        if (!ready) return; // no network namespaces here to make one
        expect((await execAsync(connect(path))).stdout).toContain("CONNECTED host-socket-reached");
        // A sandbox started after the socket was made (one started before covers it at its next start).
        fresh = new ShellService({ sandbox: sandboxInfo("auto"), env: scrubEnv(process.env), allowNetwork: true });
        const out = (await fresh.run({ command: connect(path), network }, opContext(ws.workspace))).output;
        expect(out).toContain("REFUSED");
        expect(out).not.toContain("host-socket-reached");
      } finally {
        await fresh?.dispose();
        other.kill("SIGKILL");
        await rm(path, { force: true });
      }
    },
  );

  it("a socket in the workspace stays reachable", async () => {
    expect(await run(connect(join(ws.dir, "app.sock")), false)).toContain("CONNECTED host-socket-reached");
  });

  it.runIf(existsSync("/run/postgresql/.s.PGSQL.5432"))("PostgreSQL's socket refuses a command", async () => {
    expect(await run(connect("/var/run/postgresql/.s.PGSQL.5432"), false)).toContain("REFUSED");
  });
});
