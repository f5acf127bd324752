// git_push through the real pipeline (policy, approval card, records) on SQLite and PostgreSQL,
// with the real credential and remote services, a real runner and a real git server: it asks,
// pushes once approved, refuses another URL, obeys a deny rule, says on the card when origin is
// not where the workspace last pushed (a credential scoped to the old path then stays out), and the
// token is in no row the pipeline wrote (events, tool calls, approvals, audit, spills) nor in any
// workspace file.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, readdirSync, readFileSync, lstatSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { testDatabases, useTestDb } from "../../testing/db";
import { startServer, spawnRunner, tempDir, waitFor, type RunnerChild, type TestServer } from "../../testing/runner";
import { gitAt, gitRemoteOp, startGitServer, type GitServer } from "../../testing/git-server";
import { call, newTurn, request, usePipelines, waitFor as waitSoon } from "../../testing/pipeline";
import { createGitCredentialService, loadCredentialKey } from "../../services/git-credentials";
import { createGitRemoteService } from "../../services/git-remote";
import { gitToolService } from "../../services/git-remote-services";
import { createPolicyService } from "../../services/policies";
import type { SessionEventBody } from "../../protocol/events";
import { gitPushTool } from "./git_push";

const TOKEN = "ghp_PuShToKeN_8c1d5e2f9a";
let gs: GitServer;
let server: TestServer;
let runner: RunnerChild;
let ws: string;
let dataDir: string;

const gitIn = (args: string[]) => gitAt(args, ws);

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

beforeAll(async () => {
  gs = await startGitServer({ alice: TOKEN });
  await gs.createRepo("app");
  ws = await tempDir();
  dataDir = mkdtempSync(join(tmpdir(), "quiver-gitpush-data-"));
  server = await startServer();
  runner = spawnRunner({ url: server.url, workspace: ws });
  await waitFor(() => server.pool.status().some((r) => r.connected), 20_000, "runner to connect");
  const clone = await gitRemoteOp(
    server.pool,
    "setup",
  )({
    action: "clone",
    url: `${gs.url}/app.git`,
    credential: { username: "alice", token: TOKEN },
  });
  expect(clone.ok).toBe(true);
}, 90_000);
afterAll(async () => {
  await runner?.stop();
  await server?.close();
  await gs?.stop();
  rmSync(ws, { recursive: true, force: true });
  rmSync(dataDir, { recursive: true, force: true });
});

describe.each(testDatabases())("git_push on %s", (provider) => {
  const t = useTestDb(provider);
  const setup = usePipelines(t);
  const remoteUrl = () => `${gs.url}/app.git`;

  function harness() {
    const db = t.current.db;
    const credentials = createGitCredentialService(db, loadCredentialKey(dataDir));
    const remote = createGitRemoteService({ db, runner: server.pool, credentials });
    const h = setup({
      tools: [gitPushTool],
      deps: { toolServices: (sessionId) => ({ git: gitToolService({ credentials, remote }, db, sessionId) }) },
    });
    return { h, credentials };
  }
  const cards = (events: { event: SessionEventBody }[]) =>
    events
      .filter((e) => e.event.type === "approval.required")
      .map((e) => e.event as Extract<SessionEventBody, { type: "approval.required" }>);

  it("asks, then pushes the committed branch with the owner's stored credential", async () => {
    const { h, credentials } = harness();
    const s = await newTurn(t.current);
    await credentials.save(s.actor, { host: gs.host, username: "alice", token: TOKEN });
    writeFileSync(join(ws, `from-${provider}.txt`), "agent work\n");
    gitIn(["add", "-A"]);
    gitIn(["commit", "-qm", `agent work on ${provider}`]);
    const out = h.pipeline.dispatch(request(h, s, [call("git_push", { url: remoteUrl() })]));
    const card = await waitSoon(() => cards(h.events)[0], "approval card");
    expect(JSON.stringify(card.request)).toContain(remoteUrl());
    await h.pipeline.answerApproval(s.actor, card.approvalId, "once");
    const r = (await out).results[0];
    expect(r.isError).toBe(false);
    expect(r.content).toMatch(/pushed main \([0-9a-f]{10}\)/);
    expect(gs.revParse("app", "main")).toBe(gitIn(["rev-parse", "HEAD"]).trim());
  }, 60_000);

  it("refuses a URL that is not the workspace's remote, before anyone is asked", async () => {
    const { h } = harness();
    const s = await newTurn(t.current);
    const before = gs.requests.length;
    const out = await h.pipeline.dispatch(
      request(h, s, [call("git_push", { url: "https://evil.example.com/steal.git" })]),
    );
    expect(out.results[0].isError).toBe(true);
    expect(out.results[0].content).toContain(`pushes only to this workspace's remote, ${remoteUrl()}`);
    expect(cards(h.events)).toHaveLength(0);
    expect(gs.requests.length).toBe(before);
  });

  it("obeys the org policy: a deny rule on git_push stops it without a card or a request", async () => {
    const { h, credentials } = harness();
    const s = await newTurn(t.current, "admin");
    await credentials.save(s.actor, { host: gs.host, username: "alice", token: TOKEN });
    await createPolicyService(t.current.db).set(s.actor, [
      { effect: "deny", tool: "git_push", reason: "pushes go through review" },
    ]);
    writeFileSync(join(ws, `denied-${provider}.txt`), "x\n");
    gitIn(["add", "-A"]);
    gitIn(["commit", "-qm", "should stay local"]);
    const before = gs.requests.length;
    const out = await h.pipeline.dispatch(request(h, s, [call("git_push", { url: remoteUrl() })]));
    expect(out.results[0].isError).toBe(true);
    expect(out.results[0].content).toContain("pushes go through review");
    expect(cards(h.events)).toHaveLength(0);
    expect(gs.requests.length).toBe(before);
    expect(gs.revParse("app", "main")).not.toBe(gitIn(["rev-parse", "HEAD"]).trim());
  }, 60_000);

  it("says on the card that origin changed since the last push, and keeps a scoped credential to its path", async () => {
    const { h, credentials } = harness();
    const db = t.current.db;
    const s = await newTurn(t.current);
    const project = await db.project.create({
      data: { orgId: s.actor.orgId, name: `git-${provider}`, createdById: s.user.id },
    });
    const row = await db.workspace.create({
      data: { id: `ws-${provider}-${s.session.id}`, projectId: project.id, userId: s.user.id },
    });
    await db.session.update({ where: { id: s.session.id }, data: { projectId: project.id, workspaceId: row.id } });
    // Scoped to this repository only (`…/app.git` names it).
    await credentials.save(s.actor, { host: remoteUrl(), username: "alice", token: TOKEN });
    const commit = (name: string) => {
      writeFileSync(join(ws, `${name}-${provider}.txt`), "x\n");
      gitIn(["add", "-A"]);
      gitIn(["commit", "-qm", name]);
    };
    const push = async (url: string) => {
      const seen = cards(h.events).length;
      const out = h.pipeline.dispatch(request(h, s, [call("git_push", { url })]));
      const card = await waitSoon(() => cards(h.events)[seen], "approval card");
      await h.pipeline.answerApproval(s.actor, card.approvalId, "once");
      return { card: card.request, result: (await out).results[0] };
    };

    commit("first");
    const first = await push(remoteUrl());
    expect(first.card.url).toBe(remoteUrl());
    expect(first.card.note).toContain(`Nothing was pushed to ${remoteUrl()} from Quiver in this workspace yet`);
    expect(first.result.isError).toBe(false);
    expect((await db.workspace.findUniqueOrThrow({ where: { id: row.id } })).gitRemote).toBe(remoteUrl());

    const evil = `evil-${provider}`;
    await gs.createRepo(evil);
    const evilUrl = `${gs.url}/${evil}.git`;
    const evilHead = gs.revParse(evil, "main");
    gitIn(["remote", "set-url", "origin", evilUrl]);
    try {
      commit("second");
      const before = gs.requests.length;
      const second = await push(evilUrl);
      expect(second.card.url).toBe(evilUrl);
      expect(second.card.note).toBe(
        `origin changed since your last push: was ${remoteUrl()}, is ${evilUrl} now (the agent can change origin).`,
      );
      expect(second.result.isError).toBe(true);
      expect(second.result.content).toMatch(/asks for a sign-in/);
      expect(gs.requests.slice(before).filter((r) => r.user)).toEqual([]);
      expect(gs.revParse(evil, "main")).toBe(evilHead);
    } finally {
      gitIn(["remote", "set-url", "origin", remoteUrl()]);
    }
    commit("third");
    const third = await push(remoteUrl());
    expect(third.card.note).toBeUndefined();
    expect(third.result.isError).toBe(false);
  }, 90_000);

  it("an approval for the session covers its repository only, not another one on the same host", async () => {
    const { h, credentials } = harness();
    const s = await newTurn(t.current);
    await credentials.save(s.actor, { host: gs.host, username: "alice", token: TOKEN });
    writeFileSync(join(ws, `session-${provider}.txt`), "x\n");
    gitIn(["add", "-A"]);
    gitIn(["commit", "-qm", "session approval"]);
    const out = h.pipeline.dispatch(request(h, s, [call("git_push", { url: remoteUrl() })]));
    const card = await waitSoon(() => cards(h.events)[0], "approval card");
    expect(card.request.covers).toBe(`exactly ${remoteUrl()}`);
    await h.pipeline.answerApproval(s.actor, card.approvalId, "session");
    expect((await out).results[0].isError).toBe(false);

    const other = `other-${provider}`;
    await gs.createRepo(other);
    const otherUrl = `${gs.url}/${other}.git`;
    const otherHead = gs.revParse(other, "main");
    gitIn(["remote", "set-url", "origin", otherUrl]);
    try {
      const next = h.pipeline.dispatch(request(h, s, [call("git_push", { url: otherUrl })]));
      const asked = await waitSoon(() => cards(h.events)[1], "a second approval card");
      expect(asked.request.url).toBe(otherUrl);
      await h.pipeline.answerApproval(s.actor, asked.approvalId, "reject");
      expect((await next).results[0].isError).toBe(true);
      expect(gs.revParse(other, "main")).toBe(otherHead);
    } finally {
      gitIn(["remote", "set-url", "origin", remoteUrl()]);
    }
  }, 60_000);

  it("leaves the token in no stored row, event, log or workspace file", async () => {
    const db = t.current.db;
    const rows = JSON.stringify([
      await db.sessionEvent.findMany(),
      await db.toolCall.findMany(),
      await db.approval.findMany(),
      await db.auditEvent.findMany(),
      await db.spill.findMany(),
      await db.spillChunk.findMany().then((c) => c.map((x) => Buffer.from(x.bytes).toString("latin1"))),
    ]);
    expect(rows).toContain("git.credential.saved");
    expect(rows).not.toContain(TOKEN);
    const sealed = await db.gitCredential.findMany();
    expect(sealed.length).toBeGreaterThan(0);
    expect(JSON.stringify(sealed)).not.toContain(TOKEN);
    expect(holding(ws, TOKEN)).toEqual([]);
    expect(runner.stderr()).not.toContain(TOKEN);
    expect(server.logs.join("\n")).not.toContain(TOKEN);
  });
});
