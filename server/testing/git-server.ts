// A real git server for tests (tests only): `git http-backend` (git's own smart-HTTP CGI) behind a
// small Node HTTP server on 127.0.0.1 that asks for basic auth on every request, as a hosted
// forge does. Bare repositories live in a temp folder; a repository can be made to refuse pushes
// with a pre-receive hook that prints the server's message. Every Authorization header seen is
// kept (as the user name, and whether the password was right) so tests can say who came.
import { execFile, execFileSync, spawn } from "node:child_process";
import { promisify } from "node:util";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RunnerPool } from "../executors/runner-pool";
import { GIT_REMOTE_OP } from "../protocol/git-remote";

export interface GitServer {
  /** `http://127.0.0.1:PORT` — a repository is `${url}/${name}.git`. */
  url: string;
  host: string;
  root: string;
  /** Requests as they came: the user name given (or none) and whether it was let in. */
  requests: { path: string; user?: string; ok: boolean }[];
  /** A bare repository with one commit on `branch` (files: name → content). Not synchronous: a
   *  test's own server shares its event loop, and one held for seconds by thousands of files
   *  outlived its idle keep-alive sockets, which the client then reused ("other side closed"). */
  createRepo(name: string, files?: Record<string, string>, branch?: string): Promise<string>;
  /** From now on, pushes to `name` are refused with `message` (a pre-receive hook). */
  refusePushes(name: string, message: string): void;
  /** From now on, every request under `/${from}.git/` is redirected to the same place under `/${to}.git/`
   *  before any sign-in is asked, as a forge does for a renamed repository. */
  redirect(from: string, to: string): void;
  /** A ref's commit in the bare repository, or "" when it has none. */
  revParse(name: string, ref: string): string;
  stop(): Promise<void>;
}

const execFileAsync = promisify(execFile);
const HTTP_BACKEND = "/usr/lib/git-core/git-http-backend";

export async function startGitServer(users: Record<string, string>): Promise<GitServer> {
  const root = mkdtempSync(join(tmpdir(), "quiver-git-server-"));
  const requests: GitServer["requests"] = [];
  const redirects = new Map<string, string>();

  const server = createServer((req, res) => {
    for (const [from, to] of redirects)
      if ((req.url ?? "").startsWith(from)) {
        res.writeHead(301, { Location: to + (req.url ?? "").slice(from.length) }).end();
        return;
      }
    const who = basicAuth(req);
    const ok = !!who && Object.hasOwn(users, who.user) && users[who.user] === who.password;
    requests.push({ path: (req.url ?? "").split("?")[0], user: who?.user, ok });
    if (!ok) {
      res
        .writeHead(401, { "WWW-Authenticate": 'Basic realm="quiver-test"', "Content-Type": "text/plain" })
        .end("Unauthorized\n");
      return;
    }
    cgi(req, res, root, who!.user);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const port = (server.address() as { port: number }).port;
  const gitOptions = (cwd: string) => ({
    cwd,
    encoding: "utf8" as const,
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" },
  });
  const git = (args: string[], cwd = root) => execFileSync("git", args, gitOptions(cwd));
  const gitAsync = async (args: string[], cwd = root) => (await execFileAsync("git", args, gitOptions(cwd))).stdout;

  return {
    url: `http://127.0.0.1:${port}`,
    host: `127.0.0.1:${port}`,
    root,
    requests,
    async createRepo(name, files = { "README.md": "hello\n" }, branch = "main") {
      const bare = join(root, `${name}.git`);
      await gitAsync(["init", "-q", "--bare", "-b", branch, bare]);
      await gitAsync(["config", "http.receivepack", "true"], bare);
      // The files are written synchronously: a server in this process lowers libuv's pool
      // (priority.ts), and thousands of writes through it crawled on a busy machine.
      const work = mkdtempSync(join(tmpdir(), "quiver-git-seed-"));
      try {
        await gitAsync(["init", "-q", "-b", branch, work]);
        for (const [path, content] of Object.entries(files)) writeFileSync(join(work, path), content);
        await gitAsync(["add", "-A"], work);
        await gitAsync(["-c", "user.name=Seed", "-c", "user.email=seed@example.com", "commit", "-qm", "first"], work);
        await gitAsync(["push", "-q", bare, `${branch}:${branch}`], work);
      } finally {
        rmSync(work, { recursive: true, force: true });
      }
      return bare;
    },
    refusePushes(name, message) {
      const hook = join(root, `${name}.git`, "hooks", "pre-receive");
      writeFileSync(hook, `#!/bin/sh\necho ${JSON.stringify(message)} >&2\nexit 1\n`);
      chmodSync(hook, 0o755);
    },
    redirect(from, to) {
      redirects.set(`/${from}.git/`, `/${to}.git/`);
    },
    revParse(name, ref) {
      try {
        return git(["rev-parse", "--verify", "-q", ref], join(root, `${name}.git`)).trim();
      } catch {
        return "";
      }
    },
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(root, { recursive: true, force: true });
    },
  };
}

function basicAuth(req: IncomingMessage): { user: string; password: string } | undefined {
  const m = /^Basic ([A-Za-z0-9+/=]+)$/.exec(req.headers.authorization ?? "");
  if (!m) return undefined;
  const text = Buffer.from(m[1], "base64").toString("utf8");
  const colon = text.indexOf(":");
  return colon < 0 ? undefined : { user: text.slice(0, colon), password: text.slice(colon + 1) };
}

/** One request through git-http-backend (CGI: request in on stdin, headers then body out). */
function cgi(req: IncomingMessage, res: ServerResponse, root: string, user: string): void {
  const url = new URL(req.url ?? "/", "http://x");
  const child = spawn(HTTP_BACKEND, [], {
    env: {
      PATH: process.env.PATH,
      GIT_PROJECT_ROOT: root,
      GIT_HTTP_EXPORT_ALL: "1",
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_CONFIG_GLOBAL: "/dev/null",
      REMOTE_USER: user,
      REMOTE_ADDR: "127.0.0.1",
      REQUEST_METHOD: req.method ?? "GET",
      PATH_INFO: decodeURIComponent(url.pathname),
      QUERY_STRING: url.search.slice(1),
      CONTENT_TYPE: req.headers["content-type"] ?? "",
      ...(req.headers["content-encoding"] ? { HTTP_CONTENT_ENCODING: String(req.headers["content-encoding"]) } : {}),
      ...(req.headers["git-protocol"] ? { GIT_PROTOCOL: String(req.headers["git-protocol"]) } : {}),
    } as Record<string, string | undefined> as NodeJS.ProcessEnv,
    stdio: ["pipe", "pipe", "pipe"],
  });
  req.pipe(child.stdin);
  child.stdin.on("error", () => undefined);
  child.stderr.resume();
  let head = Buffer.alloc(0);
  let headersDone = false;
  child.stdout.on("data", (chunk: Buffer) => {
    if (headersDone) return void res.write(chunk);
    head = Buffer.concat([head, chunk]);
    const end = head.indexOf("\r\n\r\n");
    if (end < 0) return;
    headersDone = true;
    let status = 200;
    for (const line of head.subarray(0, end).toString("latin1").split("\r\n")) {
      const colon = line.indexOf(":");
      if (colon < 0) continue;
      const name = line.slice(0, colon).trim();
      const value = line.slice(colon + 1).trim();
      if (name.toLowerCase() === "status") status = Number.parseInt(value, 10) || 200;
      else res.setHeader(name, value);
    }
    res.writeHead(status);
    res.write(head.subarray(end + 4));
  });
  child.on("close", () => {
    if (!headersDone) res.writeHead(502).end("git http-backend failed\n");
    else res.end();
  });
}

const AS_TEST_USER = ["-c", "user.name=T", "-c", "user.email=t@example.com"];
const gitEnv = () => ({ ...process.env, GIT_CONFIG_GLOBAL: "/dev/null" });

/** git in `cwd` as a test identity with no global configuration; its output. */
export function gitAt(args: string[], cwd: string): string {
  return execFileSync("git", [...AS_TEST_USER, ...args], { cwd, encoding: "utf8", env: gitEnv() });
}

/** As gitAt, without blocking the event loop: for a git that talks to a git server in this process. */
export async function gitAtAsync(args: string[], cwd: string): Promise<string> {
  return (await execFileAsync("git", [...AS_TEST_USER, ...args], { cwd, encoding: "utf8", env: gitEnv() })).stdout;
}

/** The runner's git-remote operation for one session through `pool`, a new call id each time. */
export function gitRemoteOp(pool: RunnerPool, sessionId = "s1"): (input: unknown) => ReturnType<RunnerPool["run"]> {
  let calls = 0;
  return (input) =>
    pool.run({
      sessionId,
      callId: `git-${++calls}`,
      op: GIT_REMOTE_OP,
      input,
      deadline: Date.now() + 60_000,
      signal: new AbortController().signal,
    });
}
