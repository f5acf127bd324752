// What a runner owes for a deleted session or project is done when it is back (runner-chores.ts),
// on both databases: a real server (startQuiver, no web app) and a real `--root` runner whose
// connection runs through a TCP relay the test cuts, so the runner is away (as a remote one on a
// bad network) while its commands keep running. A session deleted then has its background
// command stopped and its checkpoint ref removed once the runner reconnects, also to a server
// started again in between, and to the one started after the server that deleted it was killed -9
// right after the delete committed (session-delete-crash-child.ts, a real process); a project
// deleted then has its workspace folder removed; a chore whose workspace still exists is dropped
// without touching the folder. A member removed from the org has their sessions' commands stopped
// and terminals closed (not their checkpoints), at once or once the runner is back, unless let in
// again by then.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { createHash, randomInt } from "node:crypto";
import { existsSync } from "node:fs";
import { rm } from "node:fs/promises";
import { createServer, connect, type Server, type Socket } from "node:net";
import { join, resolve } from "node:path";
import { createTRPCClient, httpBatchLink } from "@trpc/client";
import { startQuiver, type Quiver } from "../app";
import type { AppRouter } from "../api/root";
import { testServerEnv } from "../testing/env";
import { spawnRunner, tempDir, TEST_TOKEN, waitFor, type RunnerChild } from "../testing/runner";
import { testDatabases, useTestDb } from "../testing/db";
import { runUntilStopped } from "../testing/stopped-child";
import { processesMatching } from "../../runner/testing/exec";
import { createRunnerChores, type ChoreRunners } from "./runner-chores";

const root = resolve(import.meta.dirname, "../..");

/** A TCP relay to the server's port that can be cut (every connection dropped, new ones refused). */
async function relay(target: () => number): Promise<{ port: number; cut(): void; restore(): void; close(): void }> {
  const open = new Set<Socket>();
  let cut = false;
  const server: Server = createServer((inbound) => {
    if (cut) return void inbound.destroy();
    const outbound = connect(target(), "127.0.0.1");
    for (const s of [inbound, outbound]) {
      open.add(s);
      s.on("close", () => open.delete(s));
      s.on("error", () => {});
    }
    inbound.pipe(outbound).pipe(inbound);
    inbound.on("close", () => outbound.destroy());
    outbound.on("close", () => inbound.destroy());
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    port: (server.address() as { port: number }).port,
    cut() {
      cut = true;
      for (const s of open) s.destroy();
    },
    restore() {
      cut = false;
    },
    close() {
      for (const s of open) s.destroy();
      server.close();
    },
  };
}

describe.each(testDatabases())("what a runner owes for deletes, on %s", (provider) => {
  const t = useTestDb(provider);
  let quiver: Quiver;
  let dataDir = "";
  let rootDir = "";
  let checkpointDir = "";
  let runner: RunnerChild | undefined;
  let link: Awaited<ReturnType<typeof relay>>;
  const markers: string[] = [];
  const client = () => createTRPCClient<AppRouter>({ links: [httpBatchLink({ url: `${quiver.url}/api/trpc` })] });
  const live = () => quiver.services.runners.status().some((r) => r.id === "r1" && r.connected);
  const run = (sessionId: string, op: string, input: unknown) =>
    quiver.services.runners.run({
      sessionId,
      callId: `c-${randomInt(1e9)}`,
      op,
      input,
      deadline: Date.now() + 20_000,
      signal: new AbortController().signal,
    });
  const chores = (where: { sessionId?: string; workspaceId?: { in: string[] } }) =>
    t.current.db.runnerChore.count({ where });

  async function start(): Promise<void> {
    const env = testServerEnv(dataDir, { DATABASE_URL: t.current.url, QUIVER_RUNNER_TOKEN: TEST_TOKEN });
    quiver = await startQuiver({ env, root, web: false, log: () => {} });
  }

  function refExists(sessionId: string): boolean {
    const key = `s-${createHash("sha256").update(sessionId).digest("hex").slice(0, 24)}`;
    return execFileSync("ls", [checkpointDir], { encoding: "utf8" })
      .split("\n")
      .filter(Boolean)
      .some((shadow) => {
        try {
          execFileSync(
            "git",
            [`--git-dir=${join(checkpointDir, shadow)}`, "rev-parse", "-q", "--verify", `refs/quiver/${key}`],
            {
              stdio: "ignore",
            },
          );
          return true;
        } catch {
          return false;
        }
      });
  }

  /** A project with a session on r1 whose command left `sleep <marker>1` running, and a checkpoint. */
  async function busySession(name: string) {
    // Each case starts with the runner here, whatever an earlier one left.
    link.restore();
    await waitFor(live, 40_000, "runner connected");
    const trpc = client();
    const p = await trpc.projects.create.mutate({ name, source: { kind: "empty" } });
    const s = await trpc.sessions.create.mutate({ title: name, projectId: p.id });
    await waitFor(
      async () => (await t.current.db.workspace.findUnique({ where: { id: p.workspace!.id } }))?.state === "ready",
      20_000,
      "workspace ready",
    );
    const marker = `9${randomInt(100, 999)}.${randomInt(1000, 9999)}`;
    markers.push(marker);
    const started = await run(s.id, "shell", { command: `(sleep ${marker}1 &); sleep ${marker}2`, yield_time_ms: 300 });
    expect(started.ok).toBe(true);
    expect((await run(s.id, "checkpoint.create", {})).ok).toBe(true);
    expect(await processesMatching(`sleep ${marker}1`)).not.toEqual([]);
    expect(refExists(s.id)).toBe(true);
    return { project: p.id, workspace: p.workspace!.id, session: s.id, marker };
  }

  async function away(): Promise<void> {
    link.cut();
    await waitFor(() => !live(), 10_000, "runner away");
  }
  async function back(): Promise<void> {
    link.restore();
    await waitFor(live, 40_000, "runner back");
  }

  beforeAll(async () => {
    dataDir = await tempDir("quiver-data-");
    rootDir = await tempDir("quiver-root-");
    checkpointDir = await tempDir("quiver-checkpoints-");
    await start();
    link = await relay(() => quiver.port);
    runner = spawnRunner({
      url: `ws://127.0.0.1:${link.port}/runner`,
      workspace: null,
      args: ["--root", rootDir, "--id", "r1"],
      env: { NODE_ENV: "test", QUIVER_SANDBOX: "off", QUIVER_CHECKPOINT_DIR: checkpointDir },
    });
    await waitFor(live, 30_000, "runner r1");
  }, 90_000);

  afterAll(async () => {
    await runner?.stop();
    await quiver?.stop();
    link?.close();
    for (const m of markers)
      for (const pid of await processesMatching(`sleep ${m}`))
        try {
          process.kill(pid, "SIGKILL");
        } catch {
          /* gone */
        }
    for (const d of [dataDir, rootDir, checkpointDir]) if (d) await rm(d, { recursive: true, force: true });
  });

  it("a session deleted while its runner is away: its command stops and its checkpoints go once it is back", async () => {
    const s = await busySession("away-session");
    await away();
    await client().sessions.remove.mutate({ id: s.session });
    expect(await t.current.db.runnerChore.findMany({ where: { sessionId: s.session } })).toMatchObject([
      { runnerId: "r1", kind: "session-end", workspaceId: s.workspace },
    ]);
    // Nothing could reach the runner: all is as it was.
    expect(await processesMatching(`sleep ${s.marker}1`)).not.toEqual([]);
    expect(refExists(s.session)).toBe(true);

    await back();
    await waitFor(async () => (await processesMatching(`sleep ${s.marker}`)).length === 0, 20_000, "commands ended");
    await waitFor(() => !refExists(s.session), 20_000, "checkpoint ref gone");
    await waitFor(async () => (await chores({ sessionId: s.session })) === 0, 10_000, "chore row gone");
  }, 120_000);

  it("a session deleted in the window before a server restart: the next server does it when the runner connects", async () => {
    const s = await busySession("restart-session");
    await away();
    await client().sessions.remove.mutate({ id: s.session });
    await quiver.stop();
    await start();
    expect(await chores({ sessionId: s.session })).toBe(1);
    await back();
    await waitFor(async () => (await processesMatching(`sleep ${s.marker}`)).length === 0, 20_000, "commands ended");
    await waitFor(() => !refExists(s.session), 20_000, "checkpoint ref gone");
    await waitFor(async () => (await chores({ sessionId: s.session })) === 0, 10_000, "chore row gone");
  }, 120_000);

  it("a server killed -9 right after a session's delete committed: the next start does it when the runner connects", async () => {
    const s = await busySession("killed-session");
    await away();
    await quiver.stop();
    const row = await t.current.db.session.findUniqueOrThrow({ where: { id: s.session } });
    const actor = { userId: row.ownerId, orgId: row.orgId, role: "owner" };
    const child = await runUntilStopped("server/services/session-delete-crash-child.ts", [
      t.current.url,
      JSON.stringify(actor),
      s.session,
    ]);
    await child.kill9();
    // The runner is still away: nothing can happen before the checks below.
    await start();
    expect(await t.current.db.session.count({ where: { id: s.session } })).toBe(0);
    expect(await chores({ sessionId: s.session })).toBe(1);
    expect(await processesMatching(`sleep ${s.marker}1`)).not.toEqual([]);
    await back();
    await waitFor(async () => (await processesMatching(`sleep ${s.marker}`)).length === 0, 20_000, "commands ended");
    await waitFor(() => !refExists(s.session), 20_000, "checkpoint ref gone");
    await waitFor(async () => (await chores({ sessionId: s.session })) === 0, 10_000, "chore row gone");
  }, 120_000);

  it("a project deleted while its workspace's runner is away: the folder goes when it is back; a live workspace's never", async () => {
    const trpc = client();
    const doomed = await busySession("away-project");
    const kept = await trpc.projects.create.mutate({ name: "kept", source: { kind: "empty" } });
    await waitFor(
      async () => (await t.current.db.workspace.findUnique({ where: { id: kept.workspace!.id } }))?.state === "ready",
      20_000,
      "kept workspace ready",
    );
    await away();
    const removed = await trpc.projects.remove.mutate({ id: doomed.project });
    expect(removed.leftBehind).toMatchObject([{ workspaceId: doomed.workspace, runnerId: "r1" }]);
    expect(existsSync(join(rootDir, doomed.workspace))).toBe(true);
    // A chore naming a workspace the database still has (as a delete that did not go through
    // leaves) is dropped unrun.
    await t.current.db.runnerChore.create({
      data: {
        id: `stale-${randomInt(1e9)}`,
        runnerId: "r1",
        kind: "workspace-delete",
        workspaceId: kept.workspace!.id,
      },
    });
    const ids = { in: [doomed.workspace, kept.workspace!.id] };
    expect(await chores({ workspaceId: ids })).toBe(2);

    await back();
    await waitFor(() => !existsSync(join(rootDir, doomed.workspace)), 20_000, "folder removed");
    await waitFor(async () => (await chores({ workspaceId: ids })) === 0, 10_000, "chore rows gone");
    expect(existsSync(join(rootDir, kept.workspace!.id))).toBe(true);
    // Its command went with its folder (workspace.delete stops the workspace's processes first).
    expect(await processesMatching(`sleep ${doomed.marker}1`)).toEqual([]);
  }, 120_000);

  /** Makes `s`'s session a member's of its org (someone new), as the owner could remove them. */
  async function asMember(session: string) {
    const db = t.current.db;
    const row = await db.session.findUniqueOrThrow({ where: { id: session } });
    const n = randomInt(1e9);
    const user = await db.user.create({ data: { email: `m${n}@test.invalid`, name: `M${n}` } });
    const membership = await db.membership.create({ data: { userId: user.id, orgId: row.orgId, role: "member" } });
    await db.session.update({ where: { id: session }, data: { ownerId: user.id } });
    const owner = { userId: row.ownerId, orgId: row.orgId, role: "owner" as const };
    return { user, membership, remove: () => quiver.services.orgs.remove(owner, membership.id) };
  }

  it("a member removed from the org: their session's command and terminal stop at once, its checkpoints and the session stay", async () => {
    const s = await busySession("member-here");
    const member = await asMember(s.session);
    const terminal = quiver.services.runners.pty.open(s.session, { cols: 80, rows: 24 });
    terminal.write(`sleep ${s.marker}3\n`);
    await waitFor(async () => (await processesMatching(`sleep ${s.marker}3`)).length > 0, 10_000, "terminal's command");
    await member.remove();
    // At once, not at the runner's next renewal (10 s).
    await waitFor(async () => (await processesMatching(`sleep ${s.marker}`)).length === 0, 5_000, "commands ended");
    await waitFor(async () => (await chores({ sessionId: s.session })) === 0, 5_000, "chore row gone");
    expect(refExists(s.session)).toBe(true);
    expect(await t.current.db.session.count({ where: { id: s.session } })).toBe(1);
  }, 120_000);

  it("a member removed while the runner is away: their command stops once it is back, unless they were let in again", async () => {
    const gone = await busySession("member-away");
    const again = await busySession("member-again");
    const goneMember = await asMember(gone.session);
    const againMember = await asMember(again.session);
    await away();
    await goneMember.remove();
    await againMember.remove();
    for (const s of [gone, again])
      expect(await t.current.db.runnerChore.findMany({ where: { sessionId: s.session } })).toMatchObject([
        { runnerId: "r1", kind: "session-stop", workspaceId: s.workspace },
      ]);
    expect(await processesMatching(`sleep ${gone.marker}1`)).not.toEqual([]);
    // Let in again before the runner came back: the stop is owed no more.
    await t.current.db.membership.create({
      data: { userId: againMember.user.id, orgId: againMember.membership.orgId, role: "member" },
    });

    await back();
    await waitFor(async () => (await processesMatching(`sleep ${gone.marker}`)).length === 0, 20_000, "commands ended");
    await waitFor(async () => (await chores({ sessionId: gone.session })) === 0, 10_000, "chore row gone");
    await waitFor(async () => (await chores({ sessionId: again.session })) === 0, 10_000, "dropped chore gone");
    expect(refExists(gone.session)).toBe(true);
    expect(await processesMatching(`sleep ${again.marker}1`)).not.toEqual([]);
  }, 120_000);

  it("two instances holding the runner at once: one of them does a chore, once", async () => {
    const asked: string[] = [];
    const runners = (name: string): ChoreRunners => ({
      isLive: () => true,
      bind: () => "r-two",
      runnerOf: () => "r-two",
      unbind: () => {},
      run: () => Promise.reject(new Error("not asked")),
      runOn: async () => {
        asked.push(name);
        await new Promise((r) => setTimeout(r, 200));
        return { ok: true, output: "" };
      },
    });
    const id = `two-${randomInt(1e9)}`;
    await t.current.db.runnerChore.create({
      data: { id, runnerId: "r-two", kind: "workspace-delete", workspaceId: `w-gone-${id}` },
    });
    const log: string[] = [];
    const a = createRunnerChores(t.current.db, runners("a"), (l) => log.push(l));
    const b = createRunnerChores(t.current.db, runners("b"), (l) => log.push(l));
    await Promise.all([a.runFor(["r-two"]), b.runFor(["r-two"])]);
    expect(asked).toHaveLength(1);
    expect(await t.current.db.runnerChore.count({ where: { id } })).toBe(0);
    expect(log).toEqual([`runner chores: deleted workspace w-gone-${id}'s folder done on runner r-two`]);
  });
});
