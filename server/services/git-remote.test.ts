// Git through the whole server: tRPC over HTTP, the local runner on its workspace, a real git
// server. A person stores a credential (answered masked), clones into the session's empty
// workspace, commits, pushes, pulls; a wrong token and a refused push are named clearly; then
// a remote the agent changed is said in the status and a stale one refused, a credential scoped to
// a repository reaches no other path (nor one a redirect names); then the token is looked for in
// the database file itself, every log line and every workspace file.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTRPCClient, httpBatchLink } from "@trpc/client";
import { parseEnv } from "../env";
import { startQuiver, type Quiver } from "../app";
import type { AppRouter } from "../api/root";
import { startGitServer, type GitServer } from "../testing/git-server";

const root = join(import.meta.dirname, "../..");
const TOKEN = "ghp_WhOlEsErVeR_77aa31bc";

function holding(dir: string, needle: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    const st = lstatSync(p);
    if (st.isDirectory()) out.push(...holding(p, needle));
    else if (st.isFile() && readFileSync(p).includes(needle)) out.push(p);
  }
  return out;
}

describe("git through the server", () => {
  let quiver: Quiver;
  let gs: GitServer;
  let dataDir: string;
  let client: ReturnType<typeof createTRPCClient<AppRouter>>;
  const logs: string[] = [];
  let sessionId: string;
  const ws = () => join(dataDir, "workspace");

  beforeAll(async () => {
    gs = await startGitServer({ alice: TOKEN });
    await gs.createRepo("site", { "index.html": "<h1>hi</h1>\n" });
    dataDir = mkdtempSync(join(tmpdir(), "quiver-git-e2e-"));
    mkdirSync(ws(), { recursive: true });
    const env = parseEnv({ PORT: "0", QUIVER_DATA_DIR: dataDir });
    quiver = await startQuiver({ env, root, web: false, log: (l) => void logs.push(l) });
    client = createTRPCClient<AppRouter>({ links: [httpBatchLink({ url: `${quiver.url}/api/trpc` })] });
    const deadline = Date.now() + 30_000;
    while (!(await quiver.services.health()).ok && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    sessionId = (await client.sessions.create.mutate({ title: "git" })).id;
  }, 90_000);

  afterAll(async () => {
    await quiver?.stop();
    await gs?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("stores a credential and shows it only masked", async () => {
    const saved = await client.git.saveCredential.mutate({ host: gs.url, username: "alice", token: TOKEN });
    expect(saved).toMatchObject({ host: gs.host, username: "alice", masked: `••••${TOKEN.slice(-4)}` });
    const list = await client.git.credentials.query();
    expect(JSON.stringify(list)).not.toContain(TOKEN);
    expect(existsSync(join(dataDir, "git-credential-key"))).toBe(true);
  });

  it("clones, commits, pushes and pulls from the session", async () => {
    const clone = await client.git.clone.mutate({ sessionId, url: `${gs.url}/site.git` });
    expect(clone.message).toMatch(/^cloned/);
    expect(readFileSync(join(ws(), "index.html"), "utf8")).toBe("<h1>hi</h1>\n");
    const st = await client.git.status.query({ sessionId });
    expect(st).toMatchObject({
      remote: `${gs.url}/site.git`,
      host: gs.host,
      hasCredential: true,
      branch: "main",
      ahead: 0,
      behind: 0,
    });
    await client.files.save.mutate({ sessionId, path: "about.html", content: "about\n" });
    await promisify(execFile)("git", ["config", "user.name", "Pat"], { cwd: ws() });
    await promisify(execFile)("git", ["config", "user.email", "pat@example.com"], { cwd: ws() });
    await client.files.commit.mutate({ sessionId, message: "about page" });
    const push = await client.git.push.mutate({ sessionId });
    expect(push.message).toMatch(/^pushed main/);
    expect(push.status).toMatchObject({ ahead: 0, behind: 0 });
    expect(gs.revParse("site", "main")).toHaveLength(40);
    const pull = await client.git.pull.mutate({ sessionId });
    expect(pull.message).toBe("main is up to date with origin/main");
  }, 120_000);

  it("names a wrong token and a refused push", async () => {
    await client.git.saveCredential.mutate({ host: gs.host, username: "alice", token: "wrong-token-0000" });
    await expect(client.git.fetch.mutate({ sessionId })).rejects.toThrow(`${gs.host} refused the stored credential`);
    await client.git.saveCredential.mutate({ host: gs.host, username: "alice", token: TOKEN });
    gs.refusePushes("site", "main is protected: open a merge request");
    writeFileSync(join(ws(), "more.html"), "more\n");
    await client.files.commit.mutate({ sessionId, message: "more" });
    await expect(client.git.push.mutate({ sessionId })).rejects.toThrow(
      "The server refused the push: main is protected: open a merge request",
    );
  }, 120_000);

  it("refuses hostile input at the API", async () => {
    await expect(
      client.git.clone.mutate({ sessionId, url: `http://alice:${TOKEN}@${gs.host}/site.git` }),
    ).rejects.toThrow(/no user name or token in the URL/);
    for (const url of ["ext::sh%20-c%20id", "file:///etc", "ssh://git@example.com/x.git"])
      await expect(client.git.clone.mutate({ sessionId, url })).rejects.toThrow(/Only https/);
    await expect(client.git.clone.mutate({ sessionId, url: "ext::sh -c id" })).rejects.toThrow(/no spaces/);
    await expect(
      client.git.clone.mutate({ sessionId, url: `${gs.url}/site.git`, branch: "--upload-pack=id" }),
    ).rejects.toThrow(/branch/);
    await expect(
      client.git.saveCredential.mutate({ host: "--upload-pack=x", username: "a", token: "b" }),
    ).rejects.toThrow(/host name/);
  });

  it("says origin changed, refuses the URL shown before, and keeps a scoped credential to its path", async () => {
    await gs.createRepo("other");
    const other = `${gs.url}/other.git`;
    for (const c of await client.git.credentials.query())
      await client.git.removeCredential.mutate({ credentialId: c.id });
    const saved = await client.git.saveCredential.mutate({
      host: `${gs.url}/site.git`,
      username: "alice",
      token: TOKEN,
    });
    expect(saved).toMatchObject({ scope: "site", target: `${gs.host}/site` });
    const before = await client.git.status.query({ sessionId });
    expect(before).toMatchObject({ remote: `${gs.url}/site.git`, credentialTarget: `${gs.host}/site` });
    expect(before.remoteNote).toBeUndefined();

    // The agent rewrites origin to another repository on the same host.
    await promisify(execFile)("git", ["remote", "set-url", "origin", other], { cwd: ws() });
    try {
      const st = await client.git.status.query({ sessionId });
      expect(st).toMatchObject({ remote: other, hasCredential: false });
      expect(st.remoteNote).toContain(`origin changed since your last push: was ${gs.url}/site.git`);
      let seen = gs.requests.length;
      // The panel's Push sends the URL it showed: a remote changed since is refused, unreached.
      await expect(client.git.push.mutate({ sessionId, url: `${gs.url}/site.git` })).rejects.toThrow(
        `The workspace's remote is ${other} now, not ${gs.url}/site.git: nothing was pushed.`,
      );
      expect(gs.requests.length).toBe(seen);
      await expect(client.git.push.mutate({ sessionId, url: other })).rejects.toThrow(/asks for a sign-in/);
      expect(gs.requests.slice(seen).length).toBeGreaterThan(0);
      expect(gs.requests.slice(seen).filter((r) => r.user)).toEqual([]);
      expect((await client.git.status.query({ sessionId })).remoteNote).toContain("origin changed");

      // A redirect from the scoped repository to another path on the host gets no credential.
      await promisify(execFile)("git", ["remote", "set-url", "origin", `${gs.url}/site.git`], { cwd: ws() });
      gs.redirect("site", "other");
      seen = gs.requests.length;
      await expect(client.git.fetch.mutate({ sessionId })).rejects.toThrow(/sign-in|refused the stored credential/);
      const reached = gs.requests.slice(seen);
      expect(reached.some((r) => r.path.startsWith("/other.git/"))).toBe(true);
      expect(reached.filter((r) => r.user)).toEqual([]);
    } finally {
      await promisify(execFile)("git", ["remote", "set-url", "origin", `${gs.url}/site.git`], { cwd: ws() });
    }
  }, 120_000);

  it("leaves the token in no database byte, log line or workspace file", () => {
    const dbFiles = readdirSync(dataDir).filter((n) => /\.db(-wal|-journal)?$/.test(n));
    expect(dbFiles.length).toBeGreaterThan(0);
    for (const f of dbFiles) expect(readFileSync(join(dataDir, f)).includes(TOKEN), f).toBe(false);
    expect(logs.join("\n")).not.toContain(TOKEN);
    expect(holding(ws(), TOKEN)).toEqual([]);
    expect(holding(ws(), Buffer.from(`alice:${TOKEN}`).toString("base64"))).toEqual([]);
  });
});
