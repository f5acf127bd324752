// ide_git_remote on a real runner against a real git server (git http-backend with basic auth):
// clone, commit, push, pull, a wrong credential, a refused push, hostile URLs and branch names,
// and no trace of the token anywhere in the workspace (.git included) or the runner's log.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readdirSync, readFileSync, lstatSync, writeFileSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  startServer,
  spawnRunner,
  tempDir,
  waitFor,
  type RunnerChild,
  type TestServer,
} from "../../server/testing/runner";
import { gitAt, gitAtAsync, gitRemoteOp, startGitServer, type GitServer } from "../../server/testing/git-server";
import { GitRemoteStatus } from "../../server/protocol/git-remote";

const TOKEN = "tok_SeCrEt_4f1e9a77c0de";
const cred = { username: "alice", token: TOKEN };
let gs: GitServer;
let server: TestServer;
let runner: RunnerChild;
let ws: string;
let runnerTmp: string;
let op: ReturnType<typeof gitRemoteOp>;
const sh = gitAt;
const shAsync = gitAtAsync;

/** Every file under `dir` (links not followed) holding `needle`, by path. */
function filesHolding(dir: string, needle: string): string[] {
  const found: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      const st = lstatSync(p);
      if (st.isDirectory()) walk(p);
      else if (st.isFile() && readFileSync(p).includes(needle)) found.push(p);
    }
  };
  walk(dir);
  return found;
}

beforeAll(async () => {
  gs = await startGitServer({ alice: TOKEN });
  await gs.createRepo("demo", { "README.md": "hello\n", "src.txt": "one\n" });
  ws = await tempDir();
  // A temp folder of the runner's own: other suites' runners make private repositories too.
  runnerTmp = await tempDir("quiver-runner-tmp-");
  server = await startServer();
  op = gitRemoteOp(server.pool);
  runner = spawnRunner({ url: server.url, workspace: ws, env: { ...process.env, TMPDIR: runnerTmp } });
  await waitFor(() => server.pool.status().some((r) => r.connected), 20_000, "runner to connect");
}, 60_000);
afterAll(async () => {
  await runner?.stop();
  await server?.close();
  await gs?.stop();
  rmSync(ws, { recursive: true, force: true });
  rmSync(runnerTmp, { recursive: true, force: true });
});

describe("ide_git_remote", () => {
  it("asks for a credential it has none of, and names a wrong one clearly", async () => {
    const none = await op({ action: "clone", url: `${gs.url}/demo.git` });
    expect(none.ok).toBe(false);
    expect(none.output).toContain(`${gs.host} asks for a sign-in`);
    const wrong = await op({
      action: "clone",
      url: `${gs.url}/demo.git`,
      credential: { username: "alice", token: "not-the-token" },
    });
    expect(wrong.ok).toBe(false);
    expect(wrong.output).toContain(`${gs.host} refused the stored credential`);
    expect(readdirSync(ws)).toEqual([]);
  });

  it("a clone a person asks for never takes a planted clone mark as leave to empty the workspace", async () => {
    writeFileSync(join(ws, "precious.txt"), "keep me\n");
    writeFileSync(join(ws, ".quiver-clone-unfinished"), "planted\n");
    try {
      const r = await op({ action: "clone", url: `${gs.url}/demo.git`, credential: cred });
      expect(r.ok).toBe(false);
      expect(r.output).toContain("The workspace is not empty");
      expect(readFileSync(join(ws, "precious.txt"), "utf8")).toBe("keep me\n");
    } finally {
      rmSync(join(ws, "precious.txt"));
      rmSync(join(ws, ".quiver-clone-unfinished"));
    }
  });

  it("a link planted under the clone's mark during the network clone is not written through", async () => {
    const outside = mkdtempSync(join(tmpdir(), "quiver-clone-victim-"));
    const victim = join(outside, "victim.txt");
    writeFileSync(victim, "IMPORTANT, OUTSIDE THE WORKSPACE\n");
    // The agent's move, at the clone's first request: the runner has found the workspace empty
    // and is fetching; the link is there before the runner writes its mark.
    const push = gs.requests.push.bind(gs.requests);
    let planted = false;
    gs.requests.push = (...r) => {
      if (!planted) {
        symlinkSync(victim, join(ws, ".quiver-clone-unfinished"));
        planted = true;
      }
      return push(...r);
    };
    try {
      const r = await op({ action: "clone", url: `${gs.url}/demo.git`, credential: cred });
      expect(planted).toBe(true);
      expect(r.ok).toBe(false);
      expect(r.output).toContain("The workspace is not empty: .quiver-clone-unfinished was made in it");
      expect(readFileSync(victim, "utf8")).toBe("IMPORTANT, OUTSIDE THE WORKSPACE\n");
    } finally {
      gs.requests.push = push;
      rmSync(join(ws, ".quiver-clone-unfinished"), { force: true });
      rmSync(outside, { recursive: true, force: true });
    }
    expect(readdirSync(ws)).toEqual([]);
  });

  it("clones, pushes a commit, pulls one made elsewhere", async () => {
    const clone = await op({ action: "clone", url: `${gs.url}/demo.git`, credential: cred });
    expect(clone.output).toMatch(/^cloned .*demo\.git \(main at [0-9a-f]{10}\)$/);
    expect(readFileSync(join(ws, "README.md"), "utf8")).toBe("hello\n");
    expect(GitRemoteStatus.parse(clone.meta)).toEqual({
      origin: `${gs.url}/demo.git`,
      branch: "main",
      ahead: 0,
      behind: 0,
    });

    writeFileSync(join(ws, "src.txt"), "one\ntwo\n");
    sh(["commit", "-qam", "two"], ws);
    expect(GitRemoteStatus.parse((await op({ action: "status" })).meta).ahead).toBe(1);
    const push = await op({ action: "push", url: `${gs.url}/demo.git`, credential: cred });
    expect(push.output).toMatch(/^pushed main \([0-9a-f]{10}\)/);
    expect(gs.revParse("demo", "main")).toBe(sh(["rev-parse", "HEAD"], ws).trim());
    expect(GitRemoteStatus.parse(push.meta)).toMatchObject({ ahead: 0, behind: 0 });

    // Someone else pushes; pull fast-forwards to it.
    const other = mkdtempSync(join(tmpdir(), "quiver-other-"));
    await shAsync(["clone", "-q", `http://alice:${TOKEN}@${gs.host}/demo.git`, other], tmpdir());
    writeFileSync(join(other, "theirs.txt"), "theirs\n");
    sh(["add", "-A"], other);
    sh(["commit", "-qm", "theirs"], other);
    await shAsync(["push", "-q", "origin", "main"], other);
    rmSync(other, { recursive: true, force: true });
    const fetch = await op({ action: "fetch", url: `${gs.url}/demo.git`, credential: cred });
    expect(fetch.output).toContain("1 ref(s) updated");
    expect(GitRemoteStatus.parse(fetch.meta).behind).toBe(1);
    const pull = await op({ action: "pull", url: `${gs.url}/demo.git`, credential: cred });
    expect(pull.output).toMatch(/^pulled origin\/main/);
    expect(readFileSync(join(ws, "theirs.txt"), "utf8")).toBe("theirs\n");
  }, 180_000);

  it("a clone the server makes again after losing its answer is the clone already there, not an error", async () => {
    const head = sh(["rev-parse", "HEAD"], ws).trim();
    const before = readdirSync(ws).sort();
    // The server's retry of the clone that made this workspace (placement's fill): it finished.
    const again = await op({ action: "clone", url: `${gs.url}/demo.git`, credential: cred, making: true });
    expect(again.ok).toBe(true);
    expect(again.output).toBe(`cloned ${gs.url}/demo.git (main at ${head.slice(0, 10)})`);
    // Another repository, or a person's clone, into it is still refused, and nothing is touched.
    await gs.createRepo("other", { "x.txt": "x\n" });
    for (const input of [
      { action: "clone" as const, url: `${gs.url}/other.git`, credential: cred, making: true as const },
      { action: "clone" as const, url: `${gs.url}/demo.git`, credential: cred },
    ]) {
      const r = await op(input);
      expect(r.ok).toBe(false);
      expect(r.output).toContain("The workspace is not empty");
    }
    expect(readdirSync(ws).sort()).toEqual(before);
    expect(sh(["rev-parse", "HEAD"], ws).trim()).toBe(head);
  }, 120_000);

  it("says why a pull cannot fast-forward and a push is behind", async () => {
    const other = mkdtempSync(join(tmpdir(), "quiver-other-"));
    await shAsync(["clone", "-q", `http://alice:${TOKEN}@${gs.host}/demo.git`, other], tmpdir());
    writeFileSync(join(other, "a.txt"), "remote side\n");
    sh(["add", "-A"], other);
    sh(["commit", "-qm", "remote side"], other);
    await shAsync(["push", "-q", "origin", "main"], other);
    rmSync(other, { recursive: true, force: true });
    writeFileSync(join(ws, "b.txt"), "local side\n");
    sh(["add", "-A"], ws);
    sh(["commit", "-qm", "local side"], ws);
    const push = await op({ action: "push", url: `${gs.url}/demo.git`, credential: cred });
    expect(push.output).toBe(
      "The remote branch has commits this workspace does not have: pull first, then push again.",
    );
    const pull = await op({ action: "pull", url: `${gs.url}/demo.git`, credential: cred });
    expect(pull.ok).toBe(false);
    expect(pull.output).toContain("have diverged: pull only fast-forwards");
    sh(["reset", "-q", "--hard", "origin/main"], ws);
  }, 120_000);

  it("gives the server's own message when it refuses a push", async () => {
    gs.refusePushes("demo", "pushes to main need a review (policy 42)");
    writeFileSync(join(ws, "c.txt"), "c\n");
    sh(["add", "-A"], ws);
    sh(["commit", "-qm", "c"], ws);
    const push = await op({ action: "push", url: `${gs.url}/demo.git`, credential: cred });
    expect(push.ok).toBe(false);
    expect(push.output).toBe("The server refused the push: pushes to main need a review (policy 42)");
  }, 120_000);

  it("refuses hostile URLs and branch names before git sees them", async () => {
    for (const url of [
      `http://alice:${TOKEN}@${gs.host}/demo.git`,
      "ext::sh -c touch% /tmp/pwned",
      `file://${gs.root}/demo.git`,
      "--upload-pack=touch /tmp/pwned",
      "https://example.com/--upload-pack=x?y",
      "git://example.com/x.git",
      "http://example.com/x.git",
      "ssh://git@example.com/x.git",
      "git@example.com:x.git",
    ]) {
      const r = await op({ action: "fetch", url, credential: cred });
      expect(r.ok, url).toBe(false);
      expect(r.output, url).not.toContain(TOKEN);
    }
    for (const branch of ["--upload-pack=touch /tmp/pwned", "-b", "a..b", "main.lock", "x y"]) {
      const r = await op({ action: "clone", url: `${gs.url}/demo.git`, branch, credential: cred });
      expect(r.ok, branch).toBe(false);
    }
    expect(gs.requests.filter((r) => r.path.includes("upload-pack=")).length).toBe(0);
  });

  it("leaves no trace of the token in the workspace, .git included, or the runner's log", async () => {
    expect(filesHolding(ws, TOKEN)).toEqual([]);
    expect(filesHolding(ws, Buffer.from(`alice:${TOKEN}`).toString("base64"))).toEqual([]);
    expect(readFileSync(join(ws, ".git", "config"), "utf8")).not.toContain("alice");
    expect(runner.stderr()).not.toContain(TOKEN);
    expect(server.logs.join("\n")).not.toContain(TOKEN);
    // No private repository is left behind in the runner's temp folder.
    expect(readdirSync(runnerTmp).filter((n) => n.startsWith("quiver-git-net-"))).toEqual([]);
  });
});
