// Attacks on the network git's borrowing of the workspace's objects (git-remote-sync.ts): the
// agent's shell names another repository on the runner's machine in the workspace's
// `.git/objects/info/alternates`. The runner's own git, outside the sandbox, must neither tell
// the remote that repository's commits (fetch negotiation sends "have" lines) nor push its
// objects, though the agent's own commands cannot read it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createServer, request, type Server } from "node:http";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import {
  startServer,
  spawnRunner,
  runShell,
  tempDir,
  waitFor,
  type RunnerChild,
  type TestServer,
} from "../../server/testing/runner";
import { gitAt, gitAtAsync, gitRemoteOp, startGitServer, type GitServer } from "../../server/testing/git-server";

const TOKEN = "tok_borrow_7d1c55e0";
const cred = { username: "alice", token: TOKEN };
const SECRET = "ANOTHER TENANT'S SECRET 5b0e";
let gs: GitServer;
let proxy: Server;
let url: string;
let bodies: string[] = [];
let server: TestServer;
let runner: RunnerChild;
let ws: string;
let secret: string;
let secretCommit: string;
let op: ReturnType<typeof gitRemoteOp>;
const git = (args: string[], cwd: string) => gitAt(args, cwd).trim();
// Async: the git server answers in this same process.
const sh = gitAtAsync;
const agent = async (command: string) => {
  const r = await runShell(server.pool, command);
  expect(r.ok, r.output).toBe(true);
  return r.output.trim().split("\n").at(-1)!;
};

/** The remote as the attacker runs it: every request body it is sent is kept. */
function recordingProxy(target: string): Promise<Server> {
  const to = new URL(target);
  const s = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks);
      bodies.push((req.headers["content-encoding"] === "gzip" ? gunzipSync(raw) : raw).toString("latin1"));
      const out = request(
        { host: to.hostname, port: to.port, path: req.url, method: req.method, headers: req.headers },
        (r) => (res.writeHead(r.statusCode ?? 502, r.headers), r.pipe(res)),
      );
      out.end(raw);
    });
  });
  return new Promise((resolve) => s.listen(0, "127.0.0.1", () => resolve(s)));
}

beforeAll(async () => {
  gs = await startGitServer({ alice: TOKEN });
  await gs.createRepo("demo", { "README.md": "hello\n" });
  proxy = await recordingProxy(gs.url);
  url = `http://127.0.0.1:${(proxy.address() as { port: number }).port}/demo.git`;
  // Another repository on the runner's machine (another workspace's, a checkpoint shadow): the
  // sandbox hides it from the agent's commands (private /tmp).
  secret = await tempDir("quiver-secret-");
  git(["init", "-q", "-b", "main"], secret);
  writeFileSync(join(secret, "secret.txt"), `${SECRET}\n`);
  git(["add", "-A"], secret);
  git(["commit", "-qm", "secret"], secret);
  secretCommit = git(["rev-parse", "HEAD"], secret);
  ws = await tempDir();
  server = await startServer();
  op = gitRemoteOp(server.pool);
  runner = spawnRunner({ url: server.url, workspace: ws });
  await waitFor(() => server.pool.status().some((r) => r.connected), 20_000, "runner to connect");
  const clone = await op({ action: "clone", url, credential: cred });
  expect(clone.ok, clone.output).toBe(true);
}, 60_000);
afterAll(async () => {
  await runner?.stop();
  await server?.close();
  proxy?.closeAllConnections();
  await new Promise((r) => proxy?.close(r));
  await gs?.stop();
  for (const d of [ws, secret]) if (d) rmSync(d, { recursive: true, force: true });
});

/** A commit merging the remote's branch and the other repository's commit, as main: the agent
 *  learnt its id, and writes the object without git checking that the second parent exists. */
async function plantMerge(): Promise<string> {
  const head = await agent("git rev-parse refs/remotes/origin/main 2>/dev/null");
  const tree = await agent("git rev-parse 'HEAD^{tree}' 2>/dev/null");
  const lines = [`tree ${tree}`, `parent ${head}`, `parent ${secretCommit}`, "author A <a@x> 1 +0000"];
  const merge = await agent(
    `printf '${[...lines, "committer A <a@x> 1 +0000", "", "merge", ""].join("\\n")}' > /tmp/c && git hash-object -t commit -w --literally /tmp/c 2>/dev/null`,
  );
  return agent(`git update-ref refs/heads/main ${merge} 2>/dev/null && git rev-parse HEAD 2>/dev/null`);
}

/** Something new on the remote, so a fetch negotiates (sends what it has). */
async function remoteCommit(name: string): Promise<void> {
  const side = await tempDir("quiver-side-");
  await sh(["clone", "-q", `http://alice:${TOKEN}@${gs.host}/demo.git`, side], ws);
  writeFileSync(join(side, name), `${name}\n`);
  await sh(["add", "-A"], side);
  await sh(["commit", "-qm", name], side);
  await sh(["push", "-q", "origin", "main"], side);
  rmSync(side, { recursive: true, force: true });
}

const secretAtRemote = () => gs.revParse("demo", `${secretCommit}^{commit}`) !== "";
const told = () => bodies.filter((b) => b.includes(secretCommit));
/** Whether the alternates race below runs (a command of the agent's, until `.stop-alternates`). */
let alternatesRacing = false;
const ALTERNATES = () => `printf '%s\\n' ${secret}/.git/objects > .git/objects/info/alternates`;

describe("a planted alternate in the workspace's repository", () => {
  it("is out of the agent's own reach (the premise)", async () => {
    expect(await agent(`cat ${secret}/secret.txt 2>&1 || true`)).not.toContain(SECRET);
  });

  it("is refused by fetch, which tells the remote none of that repository's commits", async () => {
    await remoteCommit("one.txt");
    await agent(ALTERNATES());
    bodies = [];
    const r = await op({ action: "fetch", url, credential: cred });
    expect(r.ok).toBe(false);
    expect(r.output).toContain("reads objects from outside it (.git/objects/info/alternates)");
    expect(told()).toEqual([]);
  }, 60_000);

  it("is refused by push, which carries none of that repository's objects", async () => {
    await agent("rm -f .git/objects/info/alternates");
    expect((await op({ action: "fetch", url, credential: cred })).ok).toBe(true);
    await plantMerge();
    await agent(ALTERNATES());
    const r = await op({ action: "push", url, credential: cred });
    expect(r.ok).toBe(false);
    expect(r.output).toContain("reads objects from outside it");
    expect(secretAtRemote()).toBe(false);
  }, 60_000);

  it("refuses links in the object folder, however spelt", async () => {
    await agent("rm -f .git/objects/info/alternates");
    const spellings: [string, string][] = [
      [`ln -s ${secret}/.git/objects/info/alternates .git/objects/info/http-alternates`, "http-alternates"],
      [
        `mv .git/objects/info .git/objects/info.real && ln -s ${secret}/.git/objects/info .git/objects/info`,
        ".git/objects/info is a link",
      ],
      [
        `mv .git/objects/pack .git/objects/pack.real && ln -s ${secret}/.git/objects/pack .git/objects/pack`,
        ".git/objects/pack is a link",
      ],
      [
        `mkdir -p .git/objects/info/commit-graphs && ln -s ${secret}/.git/objects/info/commit-graph .git/objects/info/commit-graphs/graph-0.graph`,
        ".git/objects/info/commit-graphs/graph-0.graph is a link",
      ],
      [
        `ln -s ${secret}/.git/objects/${secretCommit.slice(0, 2)}/${secretCommit.slice(2)} .git/objects/pack/pack-0000.pack`,
        "pack-0000.pack is a link",
      ],
      // Refused before anything is borrowed: the workspace's own git sees no repository then.
      [`mv .git/objects .git/objects.real && ln -s ${secret}/.git/objects .git/objects`, ""],
    ];
    const undo = [
      "rm -f .git/objects/info/http-alternates",
      "rm -f .git/objects/info && mv .git/objects/info.real .git/objects/info",
      "rm -f .git/objects/pack && mv .git/objects/pack.real .git/objects/pack",
      "rm -rf .git/objects/info/commit-graphs",
      "rm -f .git/objects/pack/pack-0000.pack",
      "rm -f .git/objects && mv .git/objects.real .git/objects",
    ];
    for (const [i, [plant, says]] of spellings.entries()) {
      await agent(`${plant} 2>&1; echo planted`);
      const r = await op({ action: "push", url, credential: cred });
      expect(r.ok, plant).toBe(false);
      expect(r.output, plant).toContain(says);
      expect(secretAtRemote(), plant).toBe(false);
      await agent(`${undo[i]} 2>&1; echo undone`);
    }
  }, 120_000);

  it("is not followed when it appears after the check (a command racing the operation)", async () => {
    // The agent's long-running command plants and removes the alternate as fast as it can.
    const race = await runShell(
      server.pool,
      `while [ ! -e .stop-alternates ]; do printf '%s\\n' ${secret}/.git/objects > .git/objects/info/alternates; sleep 0.01; rm -f .git/objects/info/alternates; sleep 0.01; done; rm -f .git/objects/info/alternates; touch .alternates-stopped`,
      { input: { yield_time_ms: 500 } },
    );
    expect(race.ok).toBe(true);
    alternatesRacing = true;
    let passedCheck = 0;
    for (let i = 0; i < 6; i++) {
      await remoteCommit(`race${i}.txt`);
      bodies = [];
      const f = await op({ action: "fetch", url, credential: cred });
      if (!f.output.includes("reads objects from outside")) passedCheck++;
      expect(told()).toEqual([]);
      await plantMerge();
      const p = await op({ action: "push", url, credential: cred });
      if (!p.output.includes("reads objects from outside")) passedCheck++;
      expect(secretAtRemote()).toBe(false);
    }
    console.log(`operations that got past the check: ${passedCheck} of 12`);
    expect(passedCheck).toBeGreaterThan(0);
  }, 240_000);
});

describe("a link swapped into the object folder while the operation runs", () => {
  const O = ".git/objects";
  /** Count of the loop's calm turns (object folder real, every pack unpacked into loose objects). */
  const calmTurns = () => Number(readFileSync(join(ws, ".calm"), "utf8").trim() || "-1");
  /** Waits for two calm turns: the folder is back and the workspace's objects are all loose. */
  const calm = async () => {
    rmSync(join(ws, ".swap"), { force: true });
    const from = existsSync(join(ws, ".calm")) ? calmTurns() : -1;
    await waitFor(() => existsSync(join(ws, ".calm")) && calmTurns() >= from + 2, 20_000, "a calm turn");
  };

  it("leads the network git nowhere: it runs where the other repository does not exist", async () => {
    writeFileSync(join(ws, ".stop-alternates"), "");
    if (alternatesRacing)
      await waitFor(() => existsSync(join(ws, ".alternates-stopped")), 20_000, "the alternates loop to stop");
    // The other repository's objects both packed and loose: a swapped `pack` or `xx` folder holds them.
    git(["repack", "-a", "-q"], secret);
    const S = `${secret}/.git/objects`;
    const xx = secretCommit.slice(0, 2);
    // The agent's command: while `.swap` exists, `.git/objects/pack` and `.git/objects/<xx>` are
    // links to the other repository's half the time; otherwise its own packs are unpacked, so its
    // objects stay readable with the pack folder swapped.
    // A folder git makes again meanwhile (the workspace's index-pack) is merged back on return.
    const back = (d: string) =>
      `rm -f ${O}/${d}; if [ -d ${O}/${d} ] && [ -d ${O}/${d}.real ]; then mv ${O}/${d}/* ${O}/${d}.real/ 2>/dev/null; rm -rf ${O}/${d}; fi; ` +
      `if [ -d ${O}/${d}.real ]; then mv -T ${O}/${d}.real ${O}/${d}; fi;`;
    const loop = [
      `n=0; while [ ! -e .stop-swap ]; do`,
      `if [ -e .swap ]; then`,
      `mv -T ${O}/pack ${O}/pack.real && ln -s ${S}/pack ${O}/pack;`,
      `if [ -d ${O}/${xx} ]; then mv -T ${O}/${xx} ${O}/${xx}.real; fi; ln -s ${S}/${xx} ${O}/${xx};`,
      `sleep 0.02; ${back("pack")} ${back(xx)} sleep 0.02;`,
      `else for p in ${O}/pack/pack-*.pack; do [ -f "$p" ] || continue; mv "$p" .u.pack; rm -f "\${p%.pack}".*;`,
      `git unpack-objects -q < .u.pack; rm -f .u.pack; done; echo $n > .calm; n=$((n+1)); sleep 0.01; fi;`,
      `done; touch .swap-stopped`,
    ].join(" ");
    const race = await runShell(server.pool, loop, { input: { yield_time_ms: 500 } });
    expect(race.ok, race.output).toBe(true);
    let passedCheck = 0;
    const ROUNDS = 5;
    let pushes = 0;
    for (let i = 0; i < ROUNDS; i++) {
      await calm();
      await remoteCommit(`swap${i}.txt`);
      writeFileSync(join(ws, ".swap"), "");
      bodies = [];
      const f = await op({ action: "fetch", url, credential: cred });
      if (!f.output.includes("reads objects from outside")) passedCheck++;
      expect(told(), `fetch ${i}: ${f.output}`).toEqual([]);
      await calm();
      // Up to date with the remote (the fetch above may have failed), so the push is a fast-forward;
      // main off the merge first: a fetch from a repository missing a commit's parent fails.
      await agent("git update-ref refs/heads/main refs/remotes/origin/main 2>&1; echo reset");
      const f2 = await op({ action: "fetch", url, credential: cred });
      if (!f2.ok) {
        console.log(`round ${i}: no push, the fetch failed: ${f2.output}`);
        continue;
      }
      pushes++;
      await calm();
      await plantMerge();
      writeFileSync(join(ws, ".swap"), "");
      const p = await op({ action: "push", url, credential: cred });
      if (!p.output.includes("reads objects from outside")) passedCheck++;
      expect(secretAtRemote(), `push ${i}: ${p.output}`).toBe(false);
    }
    writeFileSync(join(ws, ".stop-swap"), "");
    await waitFor(() => existsSync(join(ws, ".swap-stopped")), 20_000, "the swapping loop to stop");
    console.log(`operations that got past the check: ${passedCheck} of ${ROUNDS + pushes}`);
    expect(pushes).toBeGreaterThan(0);
    expect(passedCheck).toBeGreaterThan(0);
  }, 400_000);
});
