// The first-run example (first-run.json) is a valid fake-provider script and drives a real turn:
// a real Quiver server (engine, pipeline, runner on a temp workspace) against the fake provider,
// every approval answered "once" as a newcomer would click. It writes, reads and edits a page,
// asks before a command, and leaves a web server running where the preview reaches it. A second
// message plays it again on new files and a new port ({{pass}}): the first pass's server keeps its.
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { SessionEvent } from "../../../protocol/events";
import { builtinTools } from "../../../tools/builtin";
import { finishedTurns, follow, useQuiverSession } from "../../../testing/quiver-session";
import { forPass } from "../script";
import { demoDataDir, loadScript } from "./first-run";

type Of<T extends SessionEvent["type"]> = Extract<SessionEvent, { type: T }>;

describe("the first-run example script", () => {
  it("parses, and calls only built-in tools with arguments their schemas accept", () => {
    const script = loadScript();
    expect(script.loop).toBe(true);
    // As the first pass plays them (script.ts: forPass fills in {{pass}}).
    const calls = script.steps
      .map((s) => forPass(s, 1))
      .flatMap((s) => ("blocks" in s ? s.blocks : []))
      .filter((b) => b.type === "tool_call");
    expect(calls.map((c) => c.name)).toEqual(["write_file", "read_file", "edit_file", "shell", "shell"]);
    const tools = new Map(builtinTools().map((t) => [t.name, t]));
    for (const c of calls)
      expect(tools.get(c.name)!.inputSchema.safeParse(JSON.parse(c.arguments)).success, c.name).toBe(true);
  });
});

describe("the demo's data folder", () => {
  it("is a new empty folder each run unless QUIVER_DATA_DIR names one to keep", () => {
    const [a, b] = [demoDataDir({}), demoDataDir({})];
    try {
      expect(a.dir).not.toBe(b.dir);
      for (const d of [a, b]) {
        expect(d.removeAtEnd).toBe(true);
        expect(readdirSync(d.dir)).toEqual([]);
      }
      expect(demoDataDir({ QUIVER_DATA_DIR: "/srv/mine" })).toEqual({ dir: "/srv/mine", removeAtEnd: false });
    } finally {
      for (const d of [a, b]) rmSync(d.dir, { recursive: true, force: true });
    }
    expect(existsSync(a.dir)).toBe(false);
  });
});

describe("the first-run example through a real server", () => {
  const script = loadScript();
  // As the demo plays it: looping, so each message plays the example again (a new pass).
  const q = useQuiverSession("anthropic", "first-run", "sqlite", { steps: script.steps, loop: script.loop });

  /** One message's turn, every approval answered "once" as a newcomer would click. */
  async function playOnce(sessionId: string, text: string, turnsBefore: number) {
    const live = follow(q.client, sessionId, (_e, all) => finishedTurns(all) === turnsBefore + 1, {
      timeoutMs: 120_000,
      onEvent: (ev) => {
        if (ev.type === "approval.required")
          void q.client.approvals.answer
            .mutate({ approvalId: ev.approvalId, choice: "once" } as never)
            .catch(() => undefined);
      },
    });
    await q.client.turns.send.mutate({ sessionId, text });
    const all = await live;
    // This turn's events: from its start on.
    return all.slice(all.map((e) => e.type).lastIndexOf("turn.started"));
  }

  it("writes, reads and edits a page, shows an approval card for a command, and starts a web server; a second message plays it again on new files and a new port", async () => {
    const session = await q.client.sessions.create.mutate({ title: "first run" });
    for (const pass of [1, 2]) {
      const events = await playOnce(session.id, pass === 1 ? "Show me around" : "Again, please", pass - 1);
      const started = events.filter((e): e is Of<"tool.started"> => e.type === "tool.started");
      const finished = new Map(
        events.filter((e): e is Of<"tool.finished"> => e.type === "tool.finished").map((e) => [e.callId, e]),
      );
      expect(started.map((s) => s.name)).toEqual(["write_file", "read_file", "edit_file", "shell", "shell"]);
      for (const s of started) expect(finished.get(s.callId)?.status, `pass ${pass}: ${s.summary}`).toBe("succeeded");

      const asked = events.filter((e): e is Of<"approval.required"> => e.type === "approval.required");
      const stamp = asked.find((a) => a.request.command?.startsWith("date -u"));
      expect(stamp?.request.allows?.length).toBeGreaterThan(0);
      expect(stamp?.request.destructive).toBeUndefined();

      const site = join(q.dataDir, "workspace", `site-${pass}`);
      expect(readFileSync(join(site, "index.html"), "utf8")).toContain("<h1>Hello from Quiver</h1>");
      expect(readFileSync(join(site, "built.txt"), "utf8")).toMatch(/UTC/);
      const port = 7999 + pass;
      const serve = finished.get(started[4].callId)!;
      expect(serve.output).toMatch(new RegExp(`Serving HTTP on 127\\.0\\.0\\.1 port ${port}`));
      expect(serve.output).toMatch(/session_id/);
      const text = events
        .filter((e): e is Of<"text.delta"> => e.type === "text.delta")
        .map((e) => e.text)
        .join("");
      expect(text).toContain(`pick port **${port}**`);
      expect(text).toContain(`site-${pass}/index.html`);
      // The port the example names is one the preview lists as the workspace's, and so can reach
      // (a server run without network listens in a sandbox of its own, out of the preview's reach).
      const listed = (await (await fetch(`${q.quiver.url}/api/preview/ports?session=${session.id}`)).json()) as {
        ports: { port: number; workspace: boolean }[];
      };
      expect(listed.ports.filter((p) => p.workspace).map((p) => p.port)).toContain(port);
    }
  }, 240_000);
});
