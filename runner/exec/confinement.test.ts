// Nothing of Quiver is visible from a workspace's commands and terminals: a real runner, told to
// hide a data folder (cookie-secret inside, the workspace inside it, as by default) and hiding
// its own source tree, runs commands and a terminal that try to read them, and /proc. And an
// unsandboxed runner is refused off loopback unless QUIVER_SANDBOX=off says so on purpose.
import { chmod, mkdir, mkdtemp, realpath, writeFile } from "node:fs/promises";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { runShell, spawnRunner, startServer, tempDir, waitFor, TEST_TOKEN } from "../../server/testing/runner";
import { useRunnerPerTest } from "../../server/testing/runner-per-test";
import { checkUnsandboxed, mountArgs, sandboxInfo, SandboxConfigError } from "./sandbox";

const bwrap = sandboxInfo("auto").available;
const ROOT = fileURLToPath(new URL("../..", import.meta.url)).replace(/\/$/, "");

const t = useRunnerPerTest();

async function connect(workspace: string, env: Record<string, string>): Promise<void> {
  t.server = await startServer();
  t.runner = spawnRunner({ url: t.server.url, workspace, env: { ...env, NODE_ENV: "test" } });
  await waitFor(() => t.server!.pool.status().some((r) => r.connected), 20_000, "runner to connect");
}

const shell = (command: string) => runShell(t.server!.pool, command);

describe.runIf(bwrap)("what a sandboxed command and terminal can see", () => {
  it("not the data folder, not Quiver's source, not the runner's /proc; the workspace inside the data folder stays writable", async () => {
    // Outside /tmp, as a real data folder is: the sandbox's private /tmp would hide it anyway.
    const data = await realpath(await mkdtemp("/var/tmp/quiver-data-"));
    t.dirs.push(data);
    const workspace = join(data, "workspace");
    await mkdir(workspace);
    await writeFile(join(data, "cookie-secret"), "SECRET-COOKIE-42\n");
    await chmod(join(data, "cookie-secret"), 0o600);
    await connect(workspace, { QUIVER_SANDBOX: "auto", QUIVER_SANDBOX_HIDE: data });
    const runnerPid = t.runner!.child.pid!;

    const probe = [
      `cat ${data}/cookie-secret 2>&1 || true`,
      `ls -A ${data} | tr '\\n' ' '; echo`,
      // Only the exec server's one bundled file is bound back into the masked checkout.
      `find ${ROOT} -type f | grep -v '^${ROOT}/node_modules/.cache/quiver/exec-server-[0-9a-f]*[.]mjs$' | wc -l`,
      `cat ${ROOT}/package.json 2>&1 | head -1`,
      `cat /proc/${runnerPid}/cmdline 2>&1 | tr '\\0' ' ' | grep -c runner/main.ts || true`,
      `cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n' | grep -c ${TEST_TOKEN} || true`,
      `echo written > inside.txt && cat inside.txt`,
      `touch ${data}/planted 2>&1 || true`,
      // Undoing a mask: umount as the sandbox's root, and again from a nested user namespace.
      `umount ${data} 2>/dev/null; umount -l ${ROOT} 2>/dev/null; unshare -rm sh -c 'umount -l ${data}; umount -l ${ROOT}' 2>/dev/null; cat ${data}/cookie-secret 2>/dev/null; ls -A ${ROOT} | grep -c package.json || true`,
    ].join("; ");
    const r = await shell(probe);
    expect(r.meta).toMatchObject({ sandboxed: true, exitCode: 0 });
    expect(r.output).not.toContain("SECRET-COOKIE-42");
    const lines = r.output.trim().split("\n");
    expect(lines[0]).toMatch(/No such file/);
    expect(lines[1].trim()).toBe("workspace"); // only the mount point of the workspace
    expect(lines[2]).toBe("0");
    expect(lines[3]).toMatch(/No such file/);
    expect(lines[4]).toBe("0");
    expect(lines[5]).toBe("0");
    expect(lines[6]).toBe("written");
    expect(lines[7]).toMatch(/Read-only file system/);
    expect(lines[8]).toBe("0");
    expect(readFileSync(join(workspace, "inside.txt"), "utf8")).toBe("written\n");

    const pty = t.server!.pool.pty.open("s1", { cols: 200, rows: 50 });
    let screen = "";
    pty.onData((d) => (screen += d));
    pty.write(`cat ${data}/cookie-secret; ls -A ${ROOT} | wc -l; echo done-$((6*7))\r`);
    await waitFor(() => screen.includes("done-42"), 15_000, "the terminal's answer");
    expect(screen).not.toContain("SECRET-COOKIE-42");
    expect(screen).toMatch(/cookie-secret: No such file/);
    pty.close();
  }, 60_000);

  it("not a file of the server's it is told to hide (the MCP configuration): it cannot be read", async () => {
    const etc = await realpath(await mkdtemp("/var/tmp/quiver-etc-"));
    t.dirs.push(etc);
    const config = join(etc, "mcp.json");
    await writeFile(config, '{"servers":{"gh":{"env":{"GITHUB_TOKEN":"MCP-TOKEN-42"}}}}\n');
    await writeFile(join(etc, "beside.txt"), "visible\n");
    const workspace = await tempDir("quiver-ws-");
    t.dirs.push(workspace);
    await connect(workspace, { QUIVER_SANDBOX: "auto", QUIVER_SANDBOX_HIDE: config });
    const r = await shell(`cat ${config}; echo "[$(wc -c < ${config})]"; cat ${etc}/beside.txt`);
    expect(r.meta).toMatchObject({ sandboxed: true });
    expect(r.output).not.toContain("MCP-TOKEN-42");
    // /dev/null bound over it, on a mount without devices: refused, or empty.
    expect(r.output).toMatch(/mcp.json: Permission denied|\[0\]/);
    expect(r.output).toContain("visible"); // the folder around it is not hidden
  }, 60_000);
});

describe("the order of mounts", () => {
  it("masks around the workspace first, binds it into them, masks inside it after, then makes the masks read-only", () => {
    const args = mountArgs({
      workspace: "/d/ws",
      cwd: "/d/ws",
      network: false,
      newSession: true,
      hide: ["/src", "/d", "/d/ws/.quiver", "/d/ws"],
      readOnly: ["/src/bundle.mjs"],
    });
    expect(args).toEqual([
      "--tmpfs",
      "/d",
      "--tmpfs",
      "/src",
      "--ro-bind",
      "/src/bundle.mjs",
      "/src/bundle.mjs",
      "--bind",
      "/d/ws",
      "/d/ws",
      "--tmpfs",
      "/d/ws/.quiver",
      "--remount-ro",
      "/d",
      "--remount-ro",
      "/src",
      "--remount-ro",
      "/d/ws/.quiver",
    ]);
  });

  it("lays a mask inside a read-only bind again over it (the tsx fallback binds the whole checkout)", () => {
    const args = mountArgs({
      workspace: "/src/.q/ws",
      cwd: "/src/.q/ws",
      network: false,
      newSession: true,
      hide: ["/src", "/src/.q"],
      readOnly: ["/src"],
    });
    expect(args.join(" ")).toBe(
      "--tmpfs /src --tmpfs /src/.q --ro-bind /src /src --tmpfs /src/.q --bind /src/.q/ws /src/.q/ws --remount-ro /src --remount-ro /src/.q",
    );
  });
});

describe("running unsandboxed is a choice off loopback", () => {
  const broken = { available: false, kind: "none", reason: "bwrap does not work here: no user namespaces" };

  it("refuses under auto when HOST or the server's address is off loopback, and says why and how to opt out", () => {
    for (const where of [
      { host: "0.0.0.0", serverUrl: "ws://127.0.0.1:3000/runner" },
      { serverUrl: "ws://10.1.2.3:3000/runner" },
      { host: "192.168.1.5", serverUrl: "ws://[::1]:3000/runner" },
    ]) {
      expect(() => checkUnsandboxed("auto", broken, where)).toThrow(SandboxConfigError);
    }
    expect(() => checkUnsandboxed("auto", broken, { host: "0.0.0.0", serverUrl: "ws://127.0.0.1/runner" })).toThrow(
      /no user namespaces.*QUIVER_SANDBOX=off/,
    );
  });

  it("allows loopback, QUIVER_SANDBOX=off and a working sandbox", () => {
    for (const host of [undefined, "127.0.0.1", "127.0.0.2", "localhost", "::1"]) {
      expect(() => checkUnsandboxed("auto", broken, { host, serverUrl: "ws://localhost:3000/runner" })).not.toThrow();
    }
    expect(() => checkUnsandboxed("off", broken, { host: "0.0.0.0", serverUrl: "ws://10.1.2.3/runner" })).not.toThrow();
    expect(() =>
      checkUnsandboxed(
        "auto",
        { available: true, kind: "bubblewrap" },
        { host: "0.0.0.0", serverUrl: "ws://10.1.2.3/runner" },
      ),
    ).not.toThrow();
  });

  it("a real runner whose bubblewrap is broken: exit 2 with HOST=0.0.0.0; runs with QUIVER_SANDBOX=off; on loopback runs and reports why", async () => {
    const bin = await tempDir("quiver-fakebin-");
    t.dirs.push(bin);
    await writeFile(join(bin, "bwrap"), "#!/bin/sh\necho 'setting up uid map: Permission denied' >&2\nexit 1\n", {
      mode: 0o755,
    });
    const workspace = await tempDir();
    t.dirs.push(workspace);
    const PATH = `${bin}:${process.env.PATH}`;

    t.server = await startServer();
    const refused = spawnRunner({
      url: t.server.url,
      workspace,
      env: { NODE_ENV: "test", PATH, HOST: "0.0.0.0", QUIVER_SANDBOX: "auto" },
    });
    expect((await refused.exited).code).toBe(2);
    expect(refused.stderr()).toMatch(
      /refusing to run commands unsandboxed because the server listens on 0\.0\.0\.0.*bwrap does not work here.*QUIVER_SANDBOX=off/,
    );
    await t.server.close();

    await connect(workspace, { PATH, HOST: "0.0.0.0", QUIVER_SANDBOX: "off" });
    expect(t.server!.pool.status()[0]).toMatchObject({ connected: true, sandboxed: false });
    await t.runner!.stop();
    await t.server!.close();

    await connect(workspace, { PATH, HOST: "127.0.0.1", QUIVER_SANDBOX: "auto" });
    expect(t.server!.pool.status()[0]).toMatchObject({
      connected: true,
      sandboxed: false,
      sandbox: { reason: expect.stringMatching(/bwrap does not work here: setting up uid map/) },
    });
    expect(t.runner!.stderr()).toMatch(/UNSANDBOXED/);
  }, 60_000);
});
