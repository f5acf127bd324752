// A full disk met by another write than a streamed answer's (issue 24, items 1 and 7): a whole
// server process whose data folder is a small real tmpfs, with a card waiting when the disk
// fills. Answering the card is the write that fails: the person must get the reason and the
// path over tRPC (not Prisma's text), the card must stay answerable, and once space is back the
// same answer runs the call and the session takes the next message.
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SessionEvent } from "../protocol/events";
import { startCrashServer, type CrashServer } from "../testing/crash-server";
import { mountTmpfs, tmpfsRefusal } from "../testing/tmpfs";
import { startFakeProvider, type FakeProvider } from "./fake-provider/server";

const refusal = tmpfsRefusal();
if (refusal) console.warn(`db-fault-card.test: SKIPPED: ${refusal}`);

describe.skipIf(refusal !== undefined)("a full disk while a card waits (a whole server on a tmpfs data folder)", () => {
  let mount: Exclude<ReturnType<typeof mountTmpfs>, string>;
  let fake: FakeProvider;
  let server: CrashServer;

  beforeAll(async () => {
    mount = mountTmpfs("48m") as typeof mount;
    mkdirSync(join(mount.dir, "workspace"));
    fake = await startFakeProvider();
    server = await startCrashServer({
      QUIVER_DATA_DIR: mount.dir,
      QUIVER_PROVIDER: "anthropic",
      QUIVER_MODEL: "claude-test",
      ANTHROPIC_API_KEY: "test-key",
      ANTHROPIC_BASE_URL: fake.anthropicBaseURL,
      DATABASE_URL: "",
      QUIVER_LOG_LEVEL: "warn",
      QUIVER_MIN_FREE_DISK_MB: "1",
    });
  }, 90_000);
  afterAll(async () => {
    server?.cleanup();
    await fake?.close();
    rmSync(join(mount.dir, "fill"), { force: true });
    mount?.unmount();
  });

  it("answering the card is refused with the reason and the path, and works once space is back", async () => {
    const { client } = server;
    const { id: sessionId } = await client.sessions.create.mutate({ title: "card" });
    fake.enqueue(
      {
        blocks: [
          {
            type: "tool_call",
            id: "call_w",
            name: "shell",
            arguments: JSON.stringify({ command: "echo ran > card-ran.txt" }),
          },
        ],
      },
      { blocks: [{ type: "text", text: "done" }] },
    );
    const seen: SessionEvent[] = [];
    const sub = client.turns.events.subscribe(
      { sessionId, lastSeq: 0 },
      { onData: (t) => seen.push((t as { data: SessionEvent }).data), onError: () => undefined },
    );
    const { turnId } = await client.turns.send.mutate({ sessionId, text: "write a file" });
    const until = async (what: string, ok: () => boolean, ms = 30_000) => {
      const deadline = Date.now() + ms;
      while (!ok()) {
        if (Date.now() > deadline)
          throw new Error(`${what}: saw ${seen.map((e) => e.type).join(", ")}\n${server.log()}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    await until("the card", () => seen.some((e) => e.type === "approval.required"));
    const card = seen.find((e) => e.type === "approval.required") as Extract<
      SessionEvent,
      { type: "approval.required" }
    >;

    try {
      writeFileSync(join(mount.dir, "fill"), Buffer.alloc(64 * 1024 * 1024));
    } catch {
      /* ENOSPC: the disk is full now */
    }
    const refused = await client.approvals.answer.mutate({ approvalId: card.approvalId, choice: "once" } as never).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(refused, "the answer was taken on a full disk").toBeDefined();
    expect(refused!.message).toContain(`the disk is full (${join(mount.dir, "quiver.db")})`);
    expect(refused!.message).not.toMatch(/prisma|invocation|disk I\/O error/i);

    rmSync(join(mount.dir, "fill"));
    // The card is still there to answer, and answering it now runs the call once.
    expect((await client.approvals.pending.query({ sessionId })).map((a) => a.approvalId)).toEqual([card.approvalId]);
    await client.approvals.answer.mutate({ approvalId: card.approvalId, choice: "once" } as never);
    await until("the turn's end", () => seen.some((e) => e.type === "turn.finished" && e.turnId === turnId));
    expect(seen.find((e) => e.type === "turn.finished" && e.turnId === turnId)).toMatchObject({ status: "completed" });
    expect(seen.find((e) => e.type === "tool.finished")).toMatchObject({ status: "succeeded" });
    fake.enqueue({ blocks: [{ type: "text", text: "still here" }] });
    const next = await client.turns.send.mutate({ sessionId, text: "and now?" });
    await until("the next turn", () => seen.some((e) => e.type === "turn.finished" && e.turnId === next.turnId));
    expect(seen.find((e) => e.type === "turn.finished" && e.turnId === next.turnId)).toMatchObject({
      status: "completed",
    });
    sub.unsubscribe();
  }, 120_000);
});
