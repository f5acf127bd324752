// A host socket removed between the sandbox's listing of sockets to cover and bwrap's mounts:
// bwrap cannot make the mount point on the read-only root and fails its start. The warm sandbox
// starts again once with a fresh listing, so the command runs. The race is made real: a bwrap
// wrapper removes a covered socket before it execs the real bwrap with the stale arguments.
import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { scrubEnv } from "./env";
import { vanishedCover } from "./host-sockets";
import { sandboxInfo } from "./sandbox";
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
  let shell: ShellService | undefined;
  const logs: string[] = [];

  beforeAll(async () => {
    ws = await tempWorkspace();
    // Outside /tmp (the sandbox's own) and the workspace: covered, as a database's socket would be.
    dir = await mkdtemp("/var/tmp/quiver-vanish-");
    const socket = join(dir, "service.sock");
    server = createServer((c) => c.end("hello\n"));
    await new Promise<void>((resolve) => server.listen(socket, resolve));
    const real = sandboxInfo("auto").bwrap!;
    // The first start loses the race: the socket goes just before bwrap mounts over it.
    const wrapper = join(dir, "bwrap");
    await writeFile(
      wrapper,
      `#!/bin/bash\nif [ ! -e '${dir}/started' ]; then : > '${dir}/started'; rm -f '${socket}'; fi\nexec '${real}' "$@"\n`,
    );
    await chmod(wrapper, 0o755);
    shell = new ShellService({
      sandbox: { available: true, kind: "bubblewrap", bwrap: wrapper },
      env: scrubEnv(process.env),
      allowNetwork: false,
      log: (line) => logs.push(line),
    });
  });
  afterAll(async () => {
    await shell?.dispose();
    server.close();
    await ws.cleanup();
    await rm(dir, { recursive: true, force: true });
  });

  it("starts again with a fresh listing, and the command runs", async () => {
    const r = await shell!.run({ command: "echo ran in $PWD" }, opContext(ws.workspace));
    expect(r.output).toBe(`ran in ${ws.dir}\n`);
    expect(r.ok).toBe(true);
    expect(await readFile(join(dir, "started"), "utf8")).toBe("");
    expect(logs.join("\n")).toContain(`${join(dir, "service.sock")} went away while the sandbox started`);
    expect(logs.join("\n")).toMatch(/bwrap: Can't (mkdir parents for|create file at) \/var\/tmp\/quiver-vanish-/);
  });
});
