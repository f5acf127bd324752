// Early starts keep the model's order, end to end: the real server, the engine against the fake
// provider on both wire formats, the pipeline and a real runner on a real workspace. A response
// that writes a file and then reads it must read what it wrote: the read may not start early
// while the write (write_file, or a shell command that writes) waits in the same response.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseEnv } from "../env";
import { startQuiver, type Quiver } from "../app";
import type { SessionEvent } from "../protocol/events";
import { startFakeProvider, type FakeProvider } from "../engine/fake-provider/server";
import type { ScriptStepInput } from "../engine/fake-provider/script";
import { trpcClients, type TrpcClient, type TrpcSocket } from "../testing/trpc";

const root = join(import.meta.dirname, "..", "..");
const tool = (id: string, name: string, args: unknown) => ({
  type: "tool_call" as const,
  id,
  name,
  arguments: JSON.stringify(args),
});
// Slow enough that the stream is still open well after the read's arguments are complete.
const slow = { delayMs: 25, deltaChars: 6 };

describe.each(["anthropic", "openai"] as const)("early starts keep the order of a response (%s wire)", (kind) => {
  let quiver: Quiver;
  let fake: FakeProvider;
  let dataDir: string;
  let client: TrpcClient;
  let wsClient: TrpcSocket;

  beforeAll(async () => {
    fake = await startFakeProvider();
    dataDir = mkdtempSync(join(tmpdir(), "quiver-early-order-"));
    mkdirSync(join(dataDir, "workspace"), { recursive: true });
    const wire =
      kind === "anthropic"
        ? { QUIVER_PROVIDER: "anthropic", ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: fake.anthropicBaseURL }
        : { QUIVER_PROVIDER: "openai", OPENAI_API_KEY: "test-key", OPENAI_BASE_URL: fake.openaiBaseURL };
    const env = parseEnv({ PORT: "0", QUIVER_DATA_DIR: dataDir, QUIVER_MODEL: "model-test", ...wire });
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

  /** Sends one message; a card is approved only after a pause, so an early read would be long done. */
  async function turn(steps: ScriptStepInput[], text: string): Promise<SessionEvent[]> {
    fake.enqueue(...steps);
    const session = await client.sessions.create.mutate({ title: text });
    const finished = new Promise<SessionEvent[]>((resolve, reject) => {
      const seen: SessionEvent[] = [];
      const sub = client.turns.events.subscribe(
        { sessionId: session.id, lastSeq: 0 },
        {
          onData: (tracked) => {
            const ev = (tracked as { data: SessionEvent }).data;
            seen.push(ev);
            if (ev.type === "approval.required") {
              setTimeout(
                () =>
                  client.approvals.answer.mutate({ approvalId: ev.approvalId, choice: "once" } as never).catch(reject),
                400,
              );
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
    await client.turns.send.mutate({ sessionId: session.id, text });
    return finished;
  }

  const finishedOf = (events: SessionEvent[]) => {
    const started = new Map(
      events
        .filter((e) => e.type === "tool.started")
        .map((e) => [(e as { callId: string }).callId, (e as { name: string }).name]),
    );
    return events
      .filter((e): e is Extract<SessionEvent, { type: "tool.finished" }> => e.type === "tool.finished")
      .map((e) => ({ name: started.get(e.callId), status: e.status, output: e.output }));
  };

  it("write_file then read_file of the new file: the read sees the written file", async () => {
    const events = await turn(
      [
        {
          blocks: [
            tool("call_w", "write_file", { path: "a.txt", content: `written-by-${kind}\n` }),
            tool("call_r", "read_file", { path: "a.txt" }),
          ],
          ...slow,
        },
        { blocks: [{ type: "text", text: "Done." }] },
      ],
      "write a.txt and read it back",
    );
    expect(events.find((e) => e.type === "turn.finished")).toMatchObject({ status: "completed" });
    const calls = finishedOf(events);
    expect(calls.map((c) => [c.name, c.status])).toEqual([
      ["write_file", "succeeded"],
      ["read_file", "succeeded"],
    ]);
    expect(calls[1].output).toContain(`written-by-${kind}`);
    expect(readFileSync(join(dataDir, "workspace", "a.txt"), "utf8")).toBe(`written-by-${kind}\n`);
    // The model was told what the read saw: the file, not "does not exist".
    const last = fake.requests.at(-1)!.raw;
    expect(last).toContain(`written-by-${kind}`);
    expect(last).not.toMatch(/does not exist|no such file/i);
  }, 90_000);

  it("a shell command that writes, then read_file of its output: the read sees it", async () => {
    const events = await turn(
      [
        {
          blocks: [
            tool("call_s", "shell", { command: `echo shell-${kind} > b.txt` }),
            tool("call_rb", "read_file", { path: "b.txt" }),
          ],
          ...slow,
        },
        { blocks: [{ type: "text", text: "Done." }] },
      ],
      "write b.txt with the shell and read it back",
    );
    expect(events.find((e) => e.type === "turn.finished")).toMatchObject({ status: "completed" });
    const calls = finishedOf(events);
    expect(calls.map((c) => [c.name, c.status])).toEqual([
      ["shell", "succeeded"],
      ["read_file", "succeeded"],
    ]);
    expect(calls[1].output).toContain(`shell-${kind}`);
    expect(fake.requests.at(-1)!.raw).not.toMatch(/does not exist|no such file/i);
  }, 90_000);
});
