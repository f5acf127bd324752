// The first-run example (first-run.json) is a valid fake-provider script and drives a real turn:
// a real Quiver server (engine, pipeline, runner on a temp workspace) against the fake provider,
// every approval answered "once" as a newcomer would click. It writes, reads and edits a page,
// asks before a command, and leaves a web server running for the preview.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { SessionEvent } from "../../../protocol/events";
import { builtinTools } from "../../../tools/builtin";
import { finishedTurns, follow, useQuiverSession } from "../../../testing/quiver-session";
import { loadScript } from "./first-run";

type Of<T extends SessionEvent["type"]> = Extract<SessionEvent, { type: T }>;

describe("the first-run example script", () => {
  it("parses, and calls only built-in tools with arguments their schemas accept", () => {
    const script = loadScript();
    expect(script.loop).toBe(true);
    const calls = script.steps.flatMap((s) => ("blocks" in s ? s.blocks : [])).filter((b) => b.type === "tool_call");
    expect(calls.map((c) => c.name)).toEqual(["write_file", "read_file", "edit_file", "shell", "shell"]);
    const tools = new Map(builtinTools().map((t) => [t.name, t]));
    for (const c of calls)
      expect(tools.get(c.name)!.inputSchema.safeParse(JSON.parse(c.arguments)).success, c.name).toBe(true);
  });
});

describe("the first-run example through a real server", () => {
  const q = useQuiverSession("anthropic", "first-run");

  it("writes, reads and edits a page, shows an approval card for a command, and starts a web server", async () => {
    q.fake.enqueue(...loadScript().steps);
    const session = await q.client.sessions.create.mutate({ title: "first run" });
    const live = follow(q.client, session.id, (_e, all) => finishedTurns(all) === 1, {
      timeoutMs: 120_000,
      onEvent: (ev) => {
        if (ev.type === "approval.required")
          void q.client.approvals.answer
            .mutate({ approvalId: ev.approvalId, choice: "once" } as never)
            .catch(() => undefined);
      },
    });
    await q.client.turns.send.mutate({ sessionId: session.id, text: "Show me around" });
    const events = await live;
    const started = events.filter((e): e is Of<"tool.started"> => e.type === "tool.started");
    const finished = new Map(
      events.filter((e): e is Of<"tool.finished"> => e.type === "tool.finished").map((e) => [e.callId, e]),
    );
    expect(started.map((s) => s.name)).toEqual(["write_file", "read_file", "edit_file", "shell", "shell"]);
    for (const s of started) expect(finished.get(s.callId)?.status, s.summary).toBe("succeeded");

    const asked = events.filter((e): e is Of<"approval.required"> => e.type === "approval.required");
    const stamp = asked.find((a) => a.request.command?.startsWith("date -u"));
    expect(stamp?.request.allows?.length).toBeGreaterThan(0);
    expect(stamp?.request.destructive).toBeUndefined();

    expect(readFileSync(join(q.dataDir, "workspace", "site", "index.html"), "utf8")).toContain(
      "<h1>Hello from Quiver</h1>",
    );
    expect(readFileSync(join(q.dataDir, "workspace", "site", "built.txt"), "utf8")).toMatch(/UTC/);
    const serve = finished.get(started[4].callId)!;
    expect(serve.output).toMatch(/Serving HTTP on 127\.0\.0\.1 port 8000/);
    expect(serve.output).toMatch(/session_id/);
    const text = events
      .filter((e): e is Of<"text.delta"> => e.type === "text.delta")
      .map((e) => e.text)
      .join("");
    expect(text).toContain("pick port **8000**");
  }, 180_000);
});
