// A whole agent session through the real server: tRPC over HTTP and WebSocket, the engine
// against the fake provider (Anthropic wire format), the pipeline, and a real runner process
// on a real workspace. The model reads a file, asks to run a command (approved here), and
// answers; every step is checked where a person or the model would see it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseEnv } from "./env";
import { startQuiver, type Quiver } from "./app";
import type { SessionEvent } from "./protocol/events";
import { startFakeProvider, type FakeProvider } from "./engine/fake-provider/server";
import { trpcClients, type TrpcClient, type TrpcSocket } from "./testing/trpc";

const root = join(import.meta.dirname, "..");

describe("an agent session end to end", () => {
  let quiver: Quiver;
  let fake: FakeProvider;
  let dataDir: string;
  let client: TrpcClient;
  let wsClient: TrpcSocket;

  beforeAll(async () => {
    fake = await startFakeProvider();
    dataDir = mkdtempSync(join(tmpdir(), "quiver-session-"));
    mkdirSync(join(dataDir, "workspace"), { recursive: true });
    writeFileSync(join(dataDir, "workspace", "notes.md"), "# Notes\nthe secret word is quiver\n");
    const env = parseEnv({
      PORT: "0",
      QUIVER_DATA_DIR: dataDir,
      QUIVER_PROVIDER: "anthropic",
      QUIVER_MODEL: "claude-test",
      ANTHROPIC_API_KEY: "test-key",
      ANTHROPIC_BASE_URL: fake.anthropicBaseURL,
    });
    quiver = await startQuiver({ env, root, web: false, log: () => {} });
    ({ ws: wsClient, client } = trpcClients(quiver.url));
    const deadline = Date.now() + 30_000;
    while (!(await quiver.services.health()).ok && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
  }, 60_000);

  afterAll(async () => {
    wsClient?.close();
    await quiver?.stop();
    await fake?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("reads, asks before running a command, runs it once approved, and answers", async () => {
    fake.enqueue(
      {
        blocks: [
          { type: "text", text: "Let me look." },
          { type: "tool_call", id: "call_read", name: "read_file", arguments: JSON.stringify({ path: "notes.md" }) },
        ],
      },
      {
        blocks: [
          {
            type: "tool_call",
            id: "call_sh",
            name: "shell",
            arguments: JSON.stringify({ command: "echo done > out.txt && cat out.txt" }),
          },
        ],
      },
      { blocks: [{ type: "text", text: "The secret word is quiver; I wrote out.txt." }] },
    );
    const session = await client.sessions.create.mutate({ title: "e2e" });
    const events: SessionEvent[] = [];
    let approved = false;
    const finished = new Promise<void>((resolve, reject) => {
      const sub = client.turns.events.subscribe(
        { sessionId: session.id, lastSeq: 0 },
        {
          onData: (tracked) => {
            const ev = (tracked as { data: SessionEvent }).data;
            events.push(ev);
            if (ev.type === "approval.required" && !approved) {
              approved = true;
              client.approvals.answer.mutate({ approvalId: ev.approvalId, choice: "once" } as never).catch(reject);
            }
            if (ev.type === "turn.finished") {
              sub.unsubscribe();
              resolve();
            }
          },
          onError: reject,
        },
      );
    });
    await client.turns.send.mutate({ sessionId: session.id, text: "What is the secret word? Then write out.txt." });
    await finished;

    const types = events.map((e) => e.type);
    expect(types.slice(0, 2).sort()).toEqual(["message.user", "turn.started"]);
    expect(types).toContain("approval.required");
    // Answered the instant the card appeared: still resolved and run exactly once.
    expect(types.filter((t) => t === "approval.resolved")).toHaveLength(1);
    expect(events.find((e) => e.type === "turn.finished")).toMatchObject({ status: "completed" });
    const seqs = events.map((e) => e.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).toBe(seqs.length);

    const finishedCalls = events.filter(
      (e): e is Extract<SessionEvent, { type: "tool.finished" }> => e.type === "tool.finished",
    );
    expect(finishedCalls.map((e) => e.status)).toEqual(["succeeded", "succeeded"]);
    expect(finishedCalls[0].output).toContain("the secret word is quiver");
    expect(finishedCalls[1].output).toContain("done");
    expect(readFileSync(join(dataDir, "workspace", "out.txt"), "utf8")).toBe("done\n");

    // The model saw both results, and the request prefix only grew.
    expect(fake.requests).toHaveLength(3);
    const second = JSON.stringify(fake.requests[1].body.messages);
    expect(second).toContain("the secret word is quiver");
    expect(JSON.stringify(fake.requests[2].body.messages)).toContain("done");
    expect(JSON.stringify(fake.requests[2].body.tools)).toBe(JSON.stringify(fake.requests[0].body.tools));
    const text = events
      .filter((e) => e.type === "text.delta")
      .map((e) => (e as { text: string }).text)
      .join("");
    expect(text).toContain("The secret word is quiver");
  }, 90_000);

  it("a rejected command never runs and the model is told why", async () => {
    fake.enqueue(
      {
        blocks: [
          {
            type: "tool_call",
            id: "call_rm",
            name: "shell",
            arguments: JSON.stringify({ command: "rm -rf notes-copy && touch should-not-exist" }),
          },
        ],
      },
      { blocks: [{ type: "text", text: "Understood, I will not delete anything." }] },
    );
    const session = await client.sessions.create.mutate({ title: "reject" });
    const before = fake.requests.length;
    const done = new Promise<SessionEvent[]>((resolve, reject) => {
      const seen: SessionEvent[] = [];
      const sub = client.turns.events.subscribe(
        { sessionId: session.id, lastSeq: 0 },
        {
          onData: (tracked) => {
            const ev = (tracked as { data: SessionEvent }).data;
            seen.push(ev);
            if (ev.type === "approval.required") {
              client.approvals.answer
                .mutate({ approvalId: ev.approvalId, choice: "reject", message: "do not delete files" } as never)
                .catch(reject);
            }
            if (ev.type === "turn.finished") {
              sub.unsubscribe();
              resolve(seen);
            }
          },
          onError: reject,
        },
      );
    });
    await client.turns.send.mutate({ sessionId: session.id, text: "clean up" });
    const seen = await done;
    expect(seen.find((e) => e.type === "tool.finished")).toMatchObject({ status: "rejected" });
    expect(existsSync(join(dataDir, "workspace", "should-not-exist"))).toBe(false);
    expect(JSON.stringify(fake.requests[before + 1].body.messages)).toContain("do not delete files");
  }, 90_000);
});
