// Git projects' URLs through projects.create, and a project cloned from a local git server end to
// end (a real server, a real `--root` runner, `git http-backend` behind basic auth on 127.0.0.1).
// http is taken only to loopback; http elsewhere, other transports, options, credentials in the
// URL and hostile branch names are refused before any project is made.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join, resolve } from "node:path";
import { createTRPCClient, httpBatchLink } from "@trpc/client";
import { startQuiver, type Quiver } from "../app";
import { testServerEnv } from "../testing/env";
import type { AppRouter } from "../api/root";
import { spawnRunner, tempDir, TEST_TOKEN, waitFor, type RunnerChild } from "../testing/runner";
import { startGitServer, type GitServer } from "../testing/git-server";

const root = resolve(import.meta.dirname, "../..");
const runnerEnv = { NODE_ENV: "test", QUIVER_SANDBOX: "off" } as const;
const TOKEN = "tok-git-projects-0123456789";

describe("git projects through projects.create", () => {
  let quiver: Quiver;
  let gs: GitServer;
  let dataDir: string;
  let rootDir: string;
  let runner: RunnerChild | undefined;
  const client = () => createTRPCClient<AppRouter>({ links: [httpBatchLink({ url: `${quiver.url}/api/trpc` })] });

  beforeAll(async () => {
    gs = await startGitServer({ alice: TOKEN });
    await gs.createRepo("site", { "index.html": "<h1>from git</h1>\n" }, "main");
    dataDir = await tempDir("quiver-data-");
    rootDir = await tempDir("quiver-root-");
    const env = testServerEnv(dataDir, { QUIVER_RUNNER_TOKEN: TEST_TOKEN });
    quiver = await startQuiver({ env, root, web: false, log: () => {} });
    runner = spawnRunner({
      url: `ws://127.0.0.1:${quiver.port}/runner`,
      workspace: null,
      args: ["--root", rootDir, "--id", "r1"],
      env: runnerEnv,
    });
    await waitFor(() => quiver.services.runners.status().some((r) => r.connected), 30_000, "runner");
  }, 90_000);

  afterAll(async () => {
    await runner?.stop();
    await quiver?.stop();
    await gs?.stop();
    for (const d of [dataDir, rootDir]) if (d) await rm(d, { recursive: true, force: true });
  });

  it("refuses http to anything but loopback and every hostile URL or branch, making no project", async () => {
    const trpc = client();
    const refused: Array<[string, RegExp]> = [
      ["http://example.com/x.git", /unencrypted: use https/],
      ["http://10.0.0.1/x.git", /unencrypted/],
      ["http://127.0.0.1.example.com/x.git", /unencrypted/],
      [`http://alice:${TOKEN}@127.0.0.1:1/site.git`, /no user name or token in the URL/],
      ["https://alice@example.com/x.git", /no user name or token/],
      ["file:///etc", /Only https/],
      ["ext::sh -c touch% /tmp/pwned", /spaces|Only https/],
      ["ext::sh%20-c%20id", /Only https/],
      ["--upload-pack=touch /tmp/pwned", /spaces|start with '-'/],
      ["-uhttps://example.com/x.git", /start with '-'/],
      ["ssh://git@example.com/x.git", /Only https/],
      ["git@example.com:x.git", /Only https/],
      ["https://example.com/x.git?upload-pack=x", /no \?query/],
      ["https://example.com/x.git\nhttps://evil.example/", /control characters/],
      ["https://example.com/", /names no repository/],
    ];
    for (const [url, why] of refused) {
      await expect(
        trpc.projects.create.mutate({ name: `p-${Math.random()}`, source: { kind: "git", url } }),
        url,
      ).rejects.toThrow(why);
    }
    for (const branch of ["--upload-pack=x", "a..b", "main\nx", "@{-1}", "HEAD"]) {
      await expect(
        trpc.projects.create.mutate({
          name: `b-${Math.random()}`,
          source: { kind: "git", url: "https://example.com/x.git", branch },
        }),
        branch,
      ).rejects.toThrow(/branch/);
    }
    expect((await trpc.projects.list.query()).map((p) => p.name)).toEqual(["Default"]);
  });

  it("creates a project from the local git server over http://127.0.0.1: its workspace is the clone", async () => {
    const trpc = client();
    await trpc.git.saveCredential.mutate({ host: gs.url, username: "alice", token: TOKEN });
    const p = await trpc.projects.create.mutate({
      name: "site",
      source: { kind: "git", url: `  ${gs.url}/site.git `, branch: "main" },
    });
    expect(p.source).toEqual({ kind: "git", url: `${gs.url}/site.git`, branch: "main" });
    const ws = p.workspace!.id;
    const row = await waitFor(
      async () => {
        const list = await trpc.projects.list.query();
        const w = list.find((x) => x.id === p.id)?.workspace;
        return w && w.state !== "creating" ? w : undefined;
      },
      60_000,
      "clone done",
    );
    expect(row).toMatchObject({ state: "ready", error: null });
    expect(readFileSync(join(rootDir, ws, "index.html"), "utf8")).toBe("<h1>from git</h1>\n");
    expect(gs.requests.some((r) => r.user === "alice" && r.ok)).toBe(true);
    // The token is in no file of the workspace.
    const git = readFileSync(join(rootDir, ws, ".git/config"), "utf8");
    expect(git).toContain(`${gs.url}/site.git`);
    expect(git).not.toContain(TOKEN);
  }, 90_000);

  it("a clone cut off by the runner's kill -9 is done again, never taken as the project", async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 4000; i++) files[`f${i}.txt`] = `file ${i}\n`.repeat(20);
    files["index.html"] = "<h1>big</h1>\n";
    await gs.createRepo("big", files, "main");
    const trpc = client();
    await trpc.git.saveCredential.mutate({ host: gs.url, username: "alice", token: TOKEN });
    const p = await trpc.projects.create.mutate({ name: "big", source: { kind: "git", url: `${gs.url}/big.git` } });
    const ws = p.workspace!.id;
    // The clone has begun in the workspace (its mark, then git init): the runner dies there.
    await waitFor(() => existsSync(join(rootDir, ws, ".quiver-clone-unfinished")), 120_000, "the clone under way");
    runner!.child.kill("SIGKILL");
    await runner!.exited;
    expect(existsSync(join(rootDir, ws, "index.html"))).toBe(false);
    const stateOf = async () => (await trpc.projects.list.query()).find((x) => x.id === p.id)?.workspace?.state;
    // Its runner is back: the workspace is not called ready with half a clone.
    runner = spawnRunner({
      url: `ws://127.0.0.1:${quiver.port}/runner`,
      workspace: null,
      args: ["--root", rootDir, "--id", "r1"],
      env: runnerEnv,
    });
    const row = await waitFor(
      async () => {
        const w = (await trpc.projects.list.query()).find((x) => x.id === p.id)?.workspace;
        return w && w.state !== "creating" ? w : undefined;
      },
      180_000,
      "the clone done again",
    );
    expect(row).toMatchObject({ state: "ready", error: null });
    expect(await stateOf()).toBe("ready");
    expect(readFileSync(join(rootDir, ws, "index.html"), "utf8")).toBe("<h1>big</h1>\n");
    expect(readdirSync(join(rootDir, ws)).filter((n) => /^f\d+\.txt$/.test(n))).toHaveLength(4000);
    expect(existsSync(join(rootDir, ws, ".quiver-clone-unfinished"))).toBe(false);
  }, 300_000);
});
