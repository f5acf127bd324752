// Two workspaces on one real `--root` runner (real bubblewrap, real namespaces): workspace a
// is the attacker, b the victim. Every way a's agent, terminal or preview could read, write,
// list or signal b's files and processes is tried and must fail, while b itself still works.
import { existsSync, readFileSync, rmSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { waitFor } from "../../server/testing/runner";
import { findOnPath, sandboxInfo } from "../exec/sandbox";
import { FakeServer, outsideTmp, spawnRootRunner, type RootRunner } from "../testing/root";

vi.setConfig({ testTimeout: 90_000, hookTimeout: 120_000 });

const ready = sandboxInfo("auto").available && !!findOnPath("slirp4netns");

/** Host pids whose command line contains `needle` (the test sees every namespace). */
async function hostPids(needle: string): Promise<number[]> {
  const out: number[] = [];
  for (const p of await readdir("/proc")) {
    if (!/^\d+$/.test(p)) continue;
    const cmd = await readFile(`/proc/${p}/cmdline`, "utf8").catch(() => "");
    if (cmd.replace(/\0/g, " ").includes(needle)) out.push(Number(p));
  }
  return out;
}

describe.runIf(ready)("a --root runner keeps two workspaces apart", () => {
  let server: FakeServer;
  let runner: RootRunner;
  let root: string;
  let url: string;
  const b = () => join(root, "b");

  beforeAll(async () => {
    root = await outsideTmp("quiver-root-");
    server = new FakeServer();
    url = await server.listen();
    runner = spawnRootRunner(url, ["--root", root, "--label", "gpu", "--capacity", "3"]);
    const hello = await server.hello();
    expect(hello).toMatchObject({ root: true, labels: ["gpu"], capacity: 3, workspaces: [] });
    for (const id of ["a", "b"])
      expect(await server.request("workspace.create", { workspaceId: id, source: { kind: "empty" } })).toMatchObject({
        ok: true,
      });
    expect(
      (await server.request("write_file", { path: "secret.txt", content: "b-secret\n" }, { workspaceId: "b" })).ok,
    ).toBe(true);
  });
  afterAll(async () => {
    await runner?.stop();
    await server?.close();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it("refuses hostile ids, duplicates, unknown workspaces and a full runner", async () => {
    for (const id of ["..", "../b", "/tmp", "B", ".x", "a/b", "x".repeat(65)]) {
      const r = await server.request("workspace.create", { workspaceId: id, source: { kind: "empty" } });
      expect(r.ok, id).toBe(false);
      expect(r.output).toMatch(/invalid input/);
    }
    expect(await server.request("workspace.create", { workspaceId: "a", source: { kind: "empty" } })).toMatchObject({
      ok: false,
      output: expect.stringMatching(/already exists/),
    });
    expect(await server.request("read_file", { path: "x" }, { workspaceId: "nope" })).toMatchObject({
      ok: false,
      output: expect.stringMatching(/does not exist/),
    });
    expect(await server.request("read_file", { path: "x" })).toMatchObject({
      ok: false,
      output: expect.stringMatching(/names none/),
    });
    expect(await server.request("workspace.create", { workspaceId: "c", source: { kind: "empty" } })).toMatchObject({
      ok: true,
    });
    expect(await server.request("workspace.create", { workspaceId: "d", source: { kind: "empty" } })).toMatchObject({
      ok: false,
      output: expect.stringMatching(/capacity/),
    });
    expect(await server.request("workspace.delete", { workspaceId: "c" })).toMatchObject({ ok: true });
  });

  it("file ops: ../b, absolute paths, planted links and a folder raced into a link never reach b", async () => {
    const attempts = ["../b/secret.txt", join(b(), "secret.txt"), "/proc/self/root" + join(b(), "secret.txt")];
    for (const path of attempts) {
      const r = await server.request("read_file", { path }, { workspaceId: "a" });
      expect(r.output, path).not.toContain("b-secret");
      expect(r.ok, path).toBe(false);
    }
    expect((await server.request("list_files", { path: "../b" }, { workspaceId: "a" })).ok).toBe(false);
    expect((await server.request("write_file", { path: "../b/pwn.txt", content: "x" }, { workspaceId: "a" })).ok).toBe(
      false,
    );
    // Links planted by a's own shell (it can write any link text it likes).
    await server.shell("a", `ln -s ${b()}/secret.txt abs-link && ln -s ../b rel-link && ln -s ${b()} dir-link`);
    for (const path of ["abs-link", "rel-link/secret.txt", "dir-link/secret.txt"]) {
      const r = await server.request("read_file", { path }, { workspaceId: "a" });
      expect(r.output, path).not.toContain("b-secret");
    }
    expect(
      (await server.request("write_file", { path: "dir-link/pwn.txt", content: "x" }, { workspaceId: "a" })).ok,
    ).toBe(false);
    // A folder swapped for a link to b, over and over, while a reads through it.
    await server.shell(
      "a",
      `mkdir -p d && echo own > d/secret.txt; (for i in $(seq 1 4000); do mv d d.x && ln -s ${b()} d; rm d; mv d.x d; done) >/dev/null 2>&1 &`,
      { yield_time_ms: 200 },
    );
    for (let i = 0; i < 60; i++) {
      const r = await server.request("read_file", { path: "d/secret.txt" }, { workspaceId: "a" });
      expect(r.output).not.toContain("b-secret");
    }
    expect(existsSync(join(b(), "pwn.txt"))).toBe(false);
    expect(readFileSync(join(b(), "secret.txt"), "utf8")).toBe("b-secret\n");
    expect((await server.request("read_file", { path: "secret.txt" }, { workspaceId: "b" })).output).toContain(
      "b-secret",
    );
  });

  it("the agent's shell cannot read, list, write or signal b", async () => {
    // A process of b, known on the host by a unique argument.
    const started = await server.request(
      "shell",
      { command: "exec sleep 3217", yield_time_ms: 500 },
      { workspaceId: "b" },
    );
    expect(started.meta).toMatchObject({ running: true, sandboxed: true });
    const [victim] = await waitFor(
      () => hostPids("sleep 3217").then((p) => (p.length ? p : undefined)),
      10_000,
      "b's sleeper",
    );
    const out = await server.shell(
      "a",
      [
        `cat ${b()}/secret.txt; echo "cat=$?"`,
        `ls ${root}; echo "ls=$?"`,
        `echo x > ${b()}/pwn.txt; echo "write=$?"`,
        `cat ../b/secret.txt; echo "rel=$?"`,
        "ps -eo pid,args | grep -c 'sleep 3217' | tr -d ' '",
        `ls /proc | grep -x ${victim}; echo "proc=$?"`,
        `kill -9 ${victim}; echo "kill=$?"`,
      ].join("\n"),
    );
    expect(out).not.toContain("b-secret");
    expect(out).toMatch(/cat=1/);
    expect(out).toMatch(/write=[12]/);
    expect(out).toMatch(/rel=1/);
    expect(out).toMatch(/proc=1/);
    expect(out).toMatch(/kill=1/);
    expect(out).toMatch(/(^|\n)a\nls=0\n/); // the root shows a's own folder only
    expect(existsSync(join(b(), "pwn.txt"))).toBe(false);
    expect(await hostPids("sleep 3217")).toContain(victim);
    // The same commands in b itself do work: the refusals above are the confinement's doing.
    expect(await server.shell("b", `cat ${b()}/secret.txt`)).toContain("b-secret");
  });

  it("a terminal of a cannot read or list b", async () => {
    const t = server.terminal("a", "term-a");
    t.type(`cat ${b()}/secret.txt; ls ${root} | wc -l; echo "done-$((6*7))"\r`);
    await t.until(/done-42/);
    expect(t.text()).not.toContain("b-secret");
    expect(t.text()).toMatch(/No such file or directory/);
    t.type("exit\r");
  });

  it("the preview of a and a's shell reach only a's own ports, never b's server", async () => {
    const tb = server.terminal("b", "term-b");
    tb.type(`cd ${b()} && python3 -m http.server 8765 --bind 127.0.0.1\r`);
    await waitFor(
      async () => (await server.preview("b", 8765)).status === 200,
      30_000,
      "b's server through b's preview",
    );
    const fromA = await server.preview("a", 8765);
    expect(fromA.status).toBeUndefined();
    expect(fromA.error).toBe("refused");
    const curl = await server.shell("a", 'curl -s -m 3 http://127.0.0.1:8765/secret.txt; echo "curl=$?"', {
      network: true,
    });
    expect(curl).not.toContain("b-secret");
    expect(curl).toMatch(/curl=[1-9]/);
    const ports = JSON.parse((await server.request("preview_ports", {}, { workspaceId: "a" })).output) as {
      ports: Array<{ port: number }>;
    };
    expect(ports.ports.map((p) => p.port)).not.toContain(8765);
  });

  it("a server in b's sandbox without network is listed for b as out of reach, and never for a", async () => {
    const listed = async (id: string) =>
      (
        JSON.parse((await server.request("preview_ports", {}, { workspaceId: id })).output) as {
          ports: Array<{ port: number; sandboxed?: boolean; command?: string }>;
        }
      ).ports;
    // a has a sandbox without network of its own running too: its namespace is not b's.
    await server.request("shell", { command: "exec sleep 3218", yield_time_ms: 300 }, { workspaceId: "a" });
    const started = await server.request(
      "shell",
      { command: "exec python3 -m http.server 8766 --bind 127.0.0.1", yield_time_ms: 300 },
      { workspaceId: "b" },
    );
    expect(started.meta).toMatchObject({ running: true, sandboxed: true });
    const mine = await waitFor(
      async () => (await listed("b")).find((p) => p.port === 8766),
      15_000,
      "b's sandboxed server in b's list",
    );
    expect(mine).toMatchObject({ sandboxed: true });
    expect(mine.command).toContain("http.server 8766");
    expect((await listed("a")).map((p) => p.port)).not.toContain(8766);
  });

  it("deleting b kills its processes and terminals and removes its files; a restart finds a", async () => {
    expect((await hostPids("sleep 3217")).length).toBeGreaterThan(0);
    const r = await server.request("workspace.delete", { workspaceId: "b" });
    expect(r).toMatchObject({ ok: true });
    expect(JSON.parse(r.output)).toMatchObject({ id: "b", existed: true, stopped: true });
    expect(existsSync(b())).toBe(false);
    await waitFor(
      async () => (await hostPids("sleep 3217")).length === 0 && (await hostPids("http.server 8765")).length === 0,
      10_000,
      "b's processes gone",
    );
    expect(await server.request("read_file", { path: "secret.txt" }, { workspaceId: "b" })).toMatchObject({
      ok: false,
    });

    const before = server.frames.length;
    await runner.stop();
    runner = spawnRootRunner(url, ["--root", root]);
    const hello = await server.hello(before);
    expect(hello.workspaces?.map((w) => w.id)).toEqual(["a"]);
    expect((await server.request("read_file", { path: "d/secret.txt" }, { workspaceId: "a" })).output).toContain("own");
  });
});
