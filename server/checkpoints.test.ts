// Checkpoints, rewind and review end to end (issue 27): a real server process with its real
// runner process on a real workspace (a git repository with its own branch, index and stash),
// the fake provider as the model. Three turns change files by file tools and by shell; restoring
// to before each gives back the bytes, modes and links exactly, and the workspace's own git state
// never moves. A conversation rewind shapes the next model request; its events stay. One hunk of
// three is reverted. Server and runner are killed with SIGKILL between checkpoint and restore.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import {
  chmodSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { testDatabases, createTestDb } from "./testing/db";
import { startCrashServer, type CrashServer } from "./testing/crash-server";
import { startFakeProvider, type FakeProvider } from "./engine/fake-provider/server";
import type { SessionEvent } from "./protocol/events";

type Entry = { kind: "file"; mode: number; data: string } | { kind: "link"; target: string };

/** The workspace as bytes, modes and links, .git left out. */
function stateOf(dir: string, rel = ""): Record<string, Entry> {
  const out: Record<string, Entry> = {};
  for (const name of readdirSync(join(dir, rel))) {
    if (!rel && name === ".git") continue;
    const p = rel ? `${rel}/${name}` : name;
    const st = lstatSync(join(dir, p));
    if (st.isSymbolicLink()) out[p] = { kind: "link", target: readlinkSync(join(dir, p)) };
    else if (st.isDirectory()) Object.assign(out, stateOf(dir, p));
    else out[p] = { kind: "file", mode: st.mode & 0o777, data: readFileSync(join(dir, p)).toString("base64") };
  }
  return out;
}

// The workspace's planted fsmonitor is for the shadow repository to ignore, not for these reads.
const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", ["-c", "core.fsmonitor=false", ...args], { cwd, encoding: "utf8" });
/** HEAD, branches, stash, index entries and the index file's bytes. */
const gitState = (ws: string) => ({
  head: git(ws, "rev-parse", "HEAD"),
  branches: git(ws, "for-each-ref", "--format=%(refname) %(objectname)"),
  staged: git(ws, "ls-files", "-s"),
  index: readFileSync(join(ws, ".git", "index")).toString("base64"),
});

const call = (id: string, name: string, args: object) => ({
  type: "tool_call" as const,
  id,
  name,
  arguments: JSON.stringify(args),
});
const lines = (n: number, at: Record<number, string> = {}) =>
  Array.from({ length: n }, (_, i) => at[i + 1] ?? `line ${i + 1}`).join("\n") + "\n";

describe.each(testDatabases())("checkpoints, rewind and review on %s", (provider) => {
  let fake: FakeProvider;
  let dataDir: string;
  let ws: string;
  let cpDir: string;
  let dbUrl = "";
  let disposeDb: (() => Promise<void>) | undefined;
  let server: CrashServer;
  let sessionId: string;
  const events: SessionEvent[] = [];
  let unsubscribe: () => void = () => {};

  async function start(): Promise<void> {
    server = await startCrashServer({
      QUIVER_DATA_DIR: dataDir,
      QUIVER_PROVIDER: "anthropic",
      QUIVER_MODEL: "claude-test",
      ANTHROPIC_API_KEY: "test-key",
      ANTHROPIC_BASE_URL: fake.anthropicBaseURL,
      DATABASE_URL: dbUrl,
      QUIVER_CHECKPOINT_DIR: cpDir,
    });
  }

  /** Follows the session's events from the start (every server life), answering approval cards. */
  function follow(): void {
    unsubscribe();
    events.length = 0;
    const sub = server.client.turns.events.subscribe(
      { sessionId, lastSeq: 0 },
      {
        onData: (tracked) => {
          const ev = (tracked as { data: SessionEvent }).data;
          events.push(ev);
          if (ev.type === "approval.required")
            void server.client.approvals.answer
              .mutate({ approvalId: ev.approvalId, choice: "once" } as never)
              .catch(() => undefined);
        },
      },
    );
    unsubscribe = () => sub.unsubscribe();
  }

  async function until<T>(what: () => T | undefined, ms = 30_000): Promise<T> {
    const deadline = Date.now() + ms;
    for (;;) {
      const v = what();
      if (v) return v;
      if (Date.now() > deadline)
        throw new Error(`timed out; events: ${events.map((e) => e.type).join(", ")}\n${server.log().slice(-3000)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Sends a message whose turn the fake provider scripts; resolves once it ended and its after-checkpoint is listed. */
  async function turn(text: string, ...responses: object[]): Promise<string> {
    fake.enqueue(...(responses as never[]));
    const { turnId } = await server.client.turns.send.mutate({ sessionId, text });
    await until(() => events.find((e) => e.type === "turn.finished" && e.turnId === turnId));
    if (events.some((e) => e.type === "checkpoint.created" && e.turnId === turnId && e.phase === "before"))
      await until(() =>
        events.find((e) => e.type === "checkpoint.created" && e.turnId === turnId && e.phase === "after"),
      );
    return turnId;
  }

  beforeAll(async () => {
    fake = await startFakeProvider();
    dataDir = mkdtempSync(join(tmpdir(), "quiver-cp-"));
    cpDir = mkdtempSync(join(tmpdir(), "quiver-cp-shadow-"));
    ws = join(dataDir, "workspace");
    mkdirSync(ws);
    if (provider === "postgresql") {
      const db = await createTestDb(provider);
      dbUrl = db.url;
      disposeDb = () => db.dispose();
    }
    // The workspace's own repository: a commit, a branch, a stash and a staged change.
    git(ws, "init", "-q", "-b", "main");
    git(ws, "config", "user.email", "t@example.com");
    git(ws, "config", "user.name", "t");
    writeFileSync(join(ws, "a.txt"), lines(50));
    writeFileSync(join(ws, "doomed.txt"), "to be deleted\n");
    writeFileSync(join(ws, "run.sh"), "#!/bin/sh\necho hi\n");
    chmodSync(join(ws, "run.sh"), 0o755);
    symlinkSync("a.txt", join(ws, "link"));
    writeFileSync(join(ws, ".gitignore"), "ignored/\n");
    git(ws, "add", "-A");
    git(ws, "commit", "-qm", "init");
    git(ws, "branch", "side");
    writeFileSync(join(ws, "doomed.txt"), "stashed change\n");
    git(ws, "stash", "-q");
    writeFileSync(join(ws, "staged.txt"), "staged\n");
    git(ws, "add", "staged.txt");
    // Planted for the shadow repository: a filter and an fsmonitor that would leave a mark if run.
    writeFileSync(join(ws, ".gitattributes"), "* filter=evil\n");
    git(ws, "config", "filter.evil.clean", `touch ${join(dataDir, "PWNED")}; cat`);
    git(ws, "config", "core.fsmonitor", `touch ${join(dataDir, "PWNED")}`);
    mkdirSync(join(ws, "ignored"));
    writeFileSync(join(ws, "ignored", "big.bin"), "not in checkpoints\n");
    await start();
    sessionId = (await server.client.sessions.create.mutate({ title: "checkpoints" })).id;
    follow();
  }, 120_000);

  afterAll(async () => {
    unsubscribe();
    server?.cleanup();
    await fake?.close();
    await disposeDb?.();
    for (const d of [dataDir, cpDir]) if (d) rmSync(d, { recursive: true, force: true });
  });

  const states: Record<string, Entry>[] = [];
  const turnIds: string[] = [];
  let ownGit: ReturnType<typeof gitState>;

  it("takes a checkpoint before and after each of three turns that change files by tools and by shell", async () => {
    ownGit = gitState(ws);
    states.push(stateOf(ws));
    turnIds.push(
      await turn(
        "edit a.txt in three places and create new.txt",
        { blocks: [call("r1", "read_file", { path: "a.txt" })] },
        {
          blocks: [
            call("w1", "write_file", {
              path: "a.txt",
              content: lines(50, { 3: "THREE", 25: "TWENTY-FIVE", 47: "FORTY-SEVEN" }),
            }),
          ],
        },
        { blocks: [call("w2", "write_file", { path: "new.txt", content: "new file\n" })] },
        { blocks: [{ type: "text", text: "done" }] },
      ),
    );
    states.push(stateOf(ws));
    turnIds.push(
      await turn(
        "shell work",
        {
          blocks: [
            call("s1", "shell", {
              command:
                "rm doomed.txt && chmod 644 run.sh && ln -sfn new.txt link && mkdir -p d && printf 'x\\0y' > d/bin.dat && chmod 600 d/bin.dat",
            }),
          ],
        },
        { blocks: [{ type: "text", text: "done" }] },
      ),
    );
    states.push(stateOf(ws));
    turnIds.push(
      await turn(
        "more",
        {
          blocks: [
            call("s2", "shell", {
              command: "rm -r d && rm link && printf 'crlf\\r\\nline' > new.txt && chmod 755 new.txt",
            }),
          ],
        },
        { blocks: [{ type: "text", text: "done" }] },
      ),
    );
    states.push(stateOf(ws));
    const list = await server.client.checkpoints.list.query({ sessionId });
    expect(list.checkpoints.map((c) => [c.turnIndex, c.phase])).toEqual([
      [1, "before"],
      [1, "after"],
      [2, "before"],
      [2, "after"],
      [3, "before"],
      [3, "after"],
    ]);
    expect(list.checkpoints[1].filesChanged).toBe(2);
    expect(events.filter((e) => e.type === "checkpoint.created")).toHaveLength(6);
  }, 120_000);

  it("shows each turn's changes and the session's, and reverts exactly one hunk of three", async () => {
    const first = await server.client.checkpoints.diff.query({ sessionId, turnId: turnIds[0] });
    expect(first.files.map((f) => [f.path, f.status])).toEqual([
      ["a.txt", "modified"],
      ["new.txt", "added"],
    ]);
    const a = first.files[0];
    expect(a.hunks).toHaveLength(3);
    const session = await server.client.checkpoints.diff.query({ sessionId });
    expect(session.files.map((f) => f.path).sort()).toEqual(["a.txt", "doomed.txt", "link", "new.txt", "run.sh"]);
    const middle = a.hunks[1];
    expect(middle.lines).toContain("+TWENTY-FIVE");
    await server.client.checkpoints.revertHunk.mutate({
      sessionId,
      turnId: turnIds[0],
      path: "a.txt",
      hunkId: middle.id,
    });
    expect(readFileSync(join(ws, "a.txt"), "utf8")).toBe(lines(50, { 3: "THREE", 47: "FORTY-SEVEN" }));
    await server.client.checkpoints.acceptHunk.mutate({
      sessionId,
      turnId: turnIds[0],
      path: "a.txt",
      hunkId: a.hunks[0].id,
    });
    const again = await server.client.checkpoints.diff.query({ sessionId, turnId: turnIds[0] });
    expect(again.files[0].hunks.map((h) => h.state)).toEqual(["accepted", "reverted", "open"]);
    // Its lines are gone now: a second revert is a conflict that changes nothing.
    await expect(
      server.client.checkpoints.revertHunk.mutate({ sessionId, turnId: turnIds[0], path: "a.txt", hunkId: middle.id }),
    ).rejects.toThrow(/CONFLICT/);
    expect(readFileSync(join(ws, "a.txt"), "utf8")).toBe(lines(50, { 3: "THREE", 47: "FORTY-SEVEN" }));
    await until(() => events.find((e) => e.type === "hunk.reviewed" && e.state === "reverted"));
    states[3] = stateOf(ws);
  }, 60_000);

  it("restores to before each turn byte for byte (modes, links), after kill -9 of the runner and of the server, and undoes a restore", async () => {
    // The runner dies (SIGKILL) between checkpoint and restore; the server starts another.
    const runnerPid = Number(
      execFileSync("pgrep", ["-P", String(server.child.pid), "-f", "runner/main.ts"], { encoding: "utf8" })
        .trim()
        .split("\n")[0],
    );
    expect(runnerPid).toBeGreaterThan(0);
    process.kill(runnerPid, "SIGKILL");
    await new Promise((r) => setTimeout(r, 300));
    let preview;
    for (const deadline = Date.now() + 30_000; ;) {
      try {
        preview = await server.client.checkpoints.restore.mutate({ sessionId, turnId: turnIds[2], dryRun: true });
        break;
      } catch (err) {
        if (Date.now() > deadline) throw err;
        await new Promise((r) => setTimeout(r, 300));
      }
    }
    expect(preview.changes.map((c) => [c.path, c.change]).sort()).toEqual([
      ["a.txt", "restore"],
      ["d/bin.dat", "recreate"],
      ["link", "recreate"],
      ["new.txt", "restore"],
    ]);
    expect(stateOf(ws)).toEqual(states[3]);
    const undo = await server.client.checkpoints.restore.mutate({ sessionId, turnId: turnIds[2], dryRun: false });
    expect(stateOf(ws)).toEqual({
      ...states[2],
      "d/bin.dat": { ...(states[2]["d/bin.dat"] as object), mode: 0o644 } as Entry,
    });
    // git keeps the executable bit, not 0600: the rest is exact.
    expect((states[2]["d/bin.dat"] as { mode: number }).mode).toBe(0o600);

    // The server dies too (SIGKILL); a new one on the same data finds every checkpoint.
    unsubscribe();
    await server.kill9();
    server.cleanup();
    await start();
    follow();
    for (const [i, state] of [
      [1, states[1]],
      [0, states[0]],
    ] as const) {
      const r = await server.client.checkpoints.restore.mutate({ sessionId, turnId: turnIds[i], dryRun: false });
      expect(r.undoCheckpointId).toBeTruthy();
      const want = { ...state };
      expect(stateOf(ws)).toEqual(want);
    }
    expect(readFileSync(join(ws, "ignored", "big.bin"), "utf8")).toBe("not in checkpoints\n");
    // Restoring to the first restore's undo brings back the files as they were just before it.
    await server.client.checkpoints.restore.mutate({ sessionId, checkpointId: undo.undoCheckpointId!, dryRun: false });
    expect(stateOf(ws)).toEqual(states[3]);
    await server.client.checkpoints.restore.mutate({ sessionId, turnId: turnIds[0], dryRun: false });
    expect(stateOf(ws)).toEqual(states[0]);
    expect(gitState(ws)).toEqual(ownGit);
    expect(git(ws, "stash", "list")).toMatch(/stash@\{0\}/);
    expect(readdirSync(dataDir)).not.toContain("PWNED");
  }, 120_000);

  it("keeps the person's own edits unless told otherwise", async () => {
    const t = await turn(
      "touch a.txt",
      { blocks: [call("s3", "shell", { command: "echo agent >> a.txt && echo agent > agent.txt" })] },
      { blocks: [{ type: "text", text: "ok" }] },
    );
    await server.client.files.save.mutate({ sessionId, path: "agent.txt", content: "the person's words\n" });
    const kept = await server.client.checkpoints.restore.mutate({ sessionId, turnId: t, dryRun: false });
    expect(kept.kept).toEqual(["agent.txt"]);
    expect(readFileSync(join(ws, "agent.txt"), "utf8")).toBe("the person's words\n");
    expect(stateOf(ws)["a.txt"]).toEqual(states[0]["a.txt"]);
    const all = await server.client.checkpoints.restore.mutate({
      sessionId,
      turnId: t,
      dryRun: false,
      keepUserEdits: false,
    });
    expect(all.kept).toEqual([]);
    expect(stateOf(ws)).toEqual(states[0]);
  }, 60_000);

  it("rewinds the conversation: the next request holds exactly the messages before the chosen turn; events stay; refused while a turn runs", async () => {
    const messagesOf = (r: { body: { messages?: unknown } }) => (r.body.messages ?? []) as unknown[];
    const requestsOf = (turnText: string) =>
      fake.requests.find((r) => JSON.stringify(messagesOf(r).at(-1)).includes(turnText));
    const second = requestsOf("shell work")!;
    const dry = await server.client.turns.rewind.mutate({
      sessionId,
      turnId: turnIds[1],
      conversation: true,
      files: false,
      dryRun: true,
    });
    expect(dry.text).toBe("shell work");
    expect(dry.rewindId).toBeUndefined();
    const r = await server.client.turns.rewind.mutate({
      sessionId,
      turnId: turnIds[1],
      conversation: true,
      files: false,
      dryRun: false,
    });
    expect(r.turnIds.slice(0, 2)).toEqual([turnIds[1], turnIds[2]]);
    await turn("after the rewind", { blocks: [{ type: "text", text: "fresh" }] });
    const next = fake.requests.at(-1)!;
    // Prompt-cache marks move with the conversation's end: compared without them.
    const plain = (v: unknown) => JSON.parse(JSON.stringify(v, (k, x) => (k === "cache_control" ? undefined : x)));
    expect(plain(messagesOf(next).slice(0, -1))).toEqual(plain(messagesOf(second).slice(0, -1)));
    expect(messagesOf(second).length).toBeGreaterThan(4);
    expect(JSON.stringify(plain(messagesOf(next).at(-1)))).toContain("after the rewind");
    expect(JSON.stringify(messagesOf(next))).not.toContain("shell work");
    // The rewound turns' events are all still there, and the rewind among them on a replay.
    const replay: SessionEvent[] = [];
    await new Promise<void>((resolve) => {
      const sub = server.client.turns.events.subscribe(
        { sessionId, lastSeq: 0 },
        {
          onData: (t) => {
            replay.push((t as { data: SessionEvent }).data);
            if (replay.length >= events.length) {
              sub.unsubscribe();
              resolve();
            }
          },
        },
      );
    });
    expect(replay.some((e) => e.type === "turn.started" && e.turnId === turnIds[2])).toBe(true);
    expect(replay.find((e) => e.type === "turn.rewound")).toMatchObject({ rewindId: r.rewindId, turnIds: r.turnIds });

    // A turn that runs (its model answer held): rewinding now is refused, saying why.
    fake.enqueue({ blocks: [{ type: "text", text: "slow answer" }], pauseAfterBytes: 10 } as never);
    const { turnId: slow } = await server.client.turns.send.mutate({ sessionId, text: "slow" });
    await expect(
      server.client.turns.rewind.mutate({
        sessionId,
        turnId: turnIds[0],
        conversation: true,
        files: false,
        dryRun: false,
      }),
    ).rejects.toThrow(/turn is running/);
    fake.resume();
    await until(() => events.find((e) => e.type === "turn.finished" && e.turnId === slow));
    await server.client.turns.unrewind.mutate({ sessionId, rewindId: r.rewindId! });
    await until(() => events.find((e) => e.type === "turn.unrewound"));
  }, 90_000);
});
