// Listening ports: the /proc/net parser on known lines, and the real listing against a server
// started as a child process working inside a temp workspace.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, readlink, realpath, rm } from "node:fs/promises";
import { connect, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { listPorts, parseProcNet, reachable, sandboxedListeners } from "./ports";
import { localServerPort } from "./index";
import { sandboxNamespace } from "../exec/procfs";

const TCP4 = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1FBB 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4242 1 0000000000000000 100 0 0 10 0
   1: 00000000:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4243 1 0000000000000000 100 0 0 10 0
   2: 0100007F:8D2A 0100007F:1FBB 01 00000000:00000000 00:00000000 00000000     0        0 4244 1 0000000000000000 100 0 0 10 0
   3: 0A00000A:0050 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4245 1 0000000000000000 100 0 0 10 0
`;
const TCP6 = `  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000001000000:1F40 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 5001 1 0000000000000000 100 0 0 10 0
   1: 00000000000000000000000000000000:0BB8 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 5002 1 0000000000000000 100 0 0 10 0
   2: 0000000000000000FFFF00000100007F:0BB9 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 5003 1 0000000000000000 100 0 0 10 0
`;

describe("parseProcNet", () => {
  it("reads listening sockets only, with addresses in network order", () => {
    expect(parseProcNet(TCP4, 4)).toEqual([
      { address: "127.0.0.1", port: 8123, inode: "4242" },
      { address: "0.0.0.0", port: 8080, inode: "4243" },
      { address: "10.0.0.10", port: 80, inode: "4245" },
    ]);
    expect(parseProcNet(TCP6, 6)).toEqual([
      { address: "::1", port: 8000, inode: "5001" },
      { address: "::", port: 3000, inode: "5002" },
      { address: "::ffff:127.0.0.1", port: 3001, inode: "5003" },
    ]);
  });

  it("keeps only addresses the loopback reaches", () => {
    expect(["127.0.0.1", "127.0.0.53", "0.0.0.0", "::", "::1", "::ffff:127.0.0.1"].every(reachable)).toBe(true);
    expect(["10.0.0.10", "192.168.1.2", "fe80:0:0:0:0:0:0:1"].some(reachable)).toBe(false);
  });

  it("knows the server's own port only when the server is on this machine", () => {
    expect(localServerPort("ws://127.0.0.1:3000/runner")).toBe(3000);
    expect(localServerPort("ws://[::1]:4000/runner")).toBe(4000);
    expect(localServerPort("wss://quiver.example.com/runner")).toBeUndefined();
  });
});

describe("listPorts", () => {
  const children: ChildProcess[] = [];
  const dirs: string[] = [];
  afterAll(async () => {
    for (const c of children) c.kill("SIGKILL");
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });

  it("lists a port opened by a process working in the workspace, marked as the workspace's, and not the excluded one", async () => {
    const ws = await realpath(await mkdtemp(join(tmpdir(), "quiver-ports-")));
    dirs.push(ws);
    const child = spawn(
      process.execPath,
      ["-e", "const s=require('net').createServer().listen(0,'127.0.0.1',()=>console.log(s.address().port))"],
      { cwd: ws, stdio: ["ignore", "pipe", "inherit"] },
    );
    children.push(child);
    const port = await new Promise<number>((resolve) =>
      child.stdout!.once("data", (d: Buffer) => resolve(Number(d.toString().trim()))),
    );
    // One listener in this test process (outside the workspace, not a descendant of `self`).
    const outside = createServer().listen(0, "127.0.0.1");
    await new Promise((r) => outside.once("listening", r));
    const outsidePort = (outside.address() as { port: number }).port;
    try {
      const ports = await listPorts({ workspace: ws, self: -1 });
      const mine = ports.find((p) => p.port === port);
      expect(mine).toMatchObject({ port, address: "127.0.0.1", workspace: true, pid: child.pid });
      expect(mine?.command).toContain("createServer");
      expect(ports.find((p) => p.port === outsidePort)?.workspace).toBe(false);
      // Workspace ports come first.
      expect(ports.findIndex((p) => !p.workspace)).toBeGreaterThan(ports.findIndex((p) => p.workspace));
      const excluded = await listPorts({ workspace: ws, self: -1, exclude: [port] });
      expect(excluded.some((p) => p.port === port)).toBe(false);
      expect(mine?.sandboxed).toBeUndefined();
    } finally {
      outside.close();
    }
  });

  it("lists a workspace server in a network namespace of its own (a command sandboxed without network) as sandboxed: listening, out of the preview's reach", async () => {
    const ws = await realpath(await mkdtemp(join(tmpdir(), "quiver-ports-")));
    dirs.push(ws);
    // As the runner's sandbox runs a command without network: bubblewrap's own namespace.
    const child = spawn(
      "bwrap",
      [
        "--dev-bind",
        "/",
        "/",
        "--unshare-net",
        "--die-with-parent",
        "--chdir",
        ws,
        process.execPath,
        "-e",
        "const s=require('net').createServer().listen(0,'127.0.0.1',()=>console.log(s.address().port))",
      ],
      { cwd: ws, stdio: ["ignore", "pipe", "inherit"] },
    );
    children.push(child);
    const port = await new Promise<number>((resolve) =>
      child.stdout!.once("data", (d: Buffer) => resolve(Number(d.toString().trim()))),
    );
    // The namespace as the warm sandbox records it: read from outside, under the bwrap it spawned.
    const sandbox = await sandboxNamespace(child.pid!);
    expect(sandbox?.ns).toMatch(/^net:\[\d+\]$/);
    expect(sandbox?.ns).not.toBe(await readlink("/proc/self/ns/net"));
    const plain = spawn("sh", ["-c", "sleep 5 & wait"], { stdio: "ignore" });
    children.push(plain);
    await new Promise((r) => setTimeout(r, 100));
    expect(await sandboxNamespace(plain.pid!)).toBeUndefined(); // nothing under it is in another one
    const ports = await listPorts({ workspace: ws, self: -1, sandboxes: [sandbox!] });
    const walled = ports.find((p) => p.port === port);
    expect(walled).toMatchObject({ port, address: "127.0.0.1", workspace: true, sandboxed: true, sandbox: "command" });
    expect(walled?.command).toContain("createServer");
    // A record whose process is no longer the one recorded (another start time: the number was
    // reused) shows nothing of its namespace.
    expect((await sandboxedListeners([sandbox!], new Set())).map((l) => l.port)).toContain(port);
    const reused = { ...sandbox!, start: `${Number(sandbox!.start) + 1}` };
    expect(await sandboxedListeners([reused], new Set())).toEqual([]);
    // Only the sandboxes recorded as this workspace's count: on a `--root` runner every
    // workspace's commands descend from it, so descent or a working directory says nothing.
    const other = await realpath(await mkdtemp(join(tmpdir(), "quiver-ports-other-")));
    dirs.push(other);
    expect((await listPorts({ workspace: other, self: process.pid })).some((p) => p.port === port)).toBe(false);
    expect((await listPorts({ workspace: ws, self: -1 })).some((p) => p.port === port)).toBe(false);
    // Not on this machine's loopback: the preview could not have opened it.
    await expect(
      new Promise((resolve, reject) => connect(port, "127.0.0.1").once("connect", resolve).once("error", reject)),
    ).rejects.toMatchObject({ code: "ECONNREFUSED" });
  });
});
