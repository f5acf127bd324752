// Session modes through a real server (tRPC, engine, pipeline, runner on a temp workspace) against
// the fake provider on both wire formats: which calls run without a card, which ask, which are
// refused in each mode; the org forbidding a mode (refused, and a session already in it falls
// back at its next call); the mode on each call's row and events; and the cached prompt prefix
// across a mode switch, measured on the recorded requests.
import { beforeAll, describe, expect, it } from "vitest";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { SessionEvent } from "../protocol/events";
import { finishedTurns, follow, useQuiverSession, type WireFormat } from "../testing/quiver-session";
import { modeNote } from "../engine/mode-note";
import { ACCEPTED } from "../tools/builtin/exit_plan_mode";

type Step = Parameters<ReturnType<typeof useQuiverSession>["fake"]["enqueue"]>[0];
const call = (id: string, name: string, args: unknown): Step => ({
  blocks: [{ type: "tool_call", id, name, arguments: JSON.stringify(args) }],
});
const calls = (...cs: [string, string, unknown][]): Step => ({
  blocks: cs.map(([id, name, args]) => ({ type: "tool_call" as const, id, name, arguments: JSON.stringify(args) })),
});
const text = (t: string): Step => ({ blocks: [{ type: "text", text: t }] });

describe.each(["anthropic", "openai"] as WireFormat[])("session modes (%s wire format)", (format) => {
  const q = useQuiverSession(format, `modes-${format}`);
  const ws = () => join(q.dataDir, "workspace");
  // Sessions made before the local runner registered wait for it at their first call.
  beforeAll(async () => {
    for (let i = 0; i < 200 && (await q.quiver.services.db.runnerNode.count()) === 0; i++)
      await new Promise((r) => setTimeout(r, 100));
  }, 30_000);

  /** One turn: every card is rejected (and counted); returns the turn's events. */
  type OnCard = (ev: Extract<SessionEvent, { type: "approval.required" }>, n: number) => void;
  const rejectCard: OnCard = (ev) =>
    void q.client.approvals.answer.mutate({ approvalId: ev.approvalId, choice: "reject", message: "not now" });
  async function turn(sessionId: string, steps: Step[], onCard: OnCard, from: number) {
    q.fake.enqueue(...steps);
    const cards: string[] = [];
    const events = await follow(q.client, sessionId, (_e, all) => finishedTurns(all) === 1, {
      lastSeq: from,
      onEvent: (ev) => {
        if (ev.type === "approval.required") {
          cards.push(ev.request.tool);
          onCard(ev, cards.length);
        }
      },
    });
    return { events, cards };
  }
  const lastSeen = new Map<string, number>();
  async function send(sessionId: string, message: string, steps: Step[], onCard = rejectCard) {
    // Only what this turn adds: after the last event the previous turn of this test saw.
    const p = turn(sessionId, steps, onCard, lastSeen.get(sessionId) ?? 0);
    await q.client.turns.send.mutate({ sessionId, text: message });
    const r = await p;
    lastSeen.set(sessionId, Math.max(...r.events.map((e) => e.seq)));
    return r;
  }
  const finished = (events: SessionEvent[]) =>
    Object.fromEntries(events.flatMap((e) => (e.type === "tool.finished" ? [[e.callId, e]] : []))) as Record<
      string,
      Extract<SessionEvent, { type: "tool.finished" }>
    >;
  const started = (events: SessionEvent[]) => events.flatMap((e) => (e.type === "tool.started" ? [e] : []));
  const statusByName = (events: SessionEvent[]) => {
    const f = finished(events);
    return started(events).map((s) => `${s.name}:${f[s.callId]?.status}`);
  };

  it("ask (the default) asks before an edit and a command; the card says its mode", async () => {
    const s = await q.client.sessions.create.mutate({ title: "ask" });
    expect(await q.client.sessions.mode.query({ sessionId: s.id })).toEqual({ mode: "ask", forbidden: [] });
    const { events, cards } = await send(s.id, "go", [
      call("a1", "write_file", { path: "ask.txt", content: "x\n" }),
      call("a2", "shell", { command: "touch ask2.txt" }),
      text("done"),
    ]);
    expect(cards).toEqual(["write_file", "shell"]);
    expect(statusByName(events)).toEqual(["write_file:rejected", "shell:rejected"]);
    expect(started(events).every((e) => e.mode === "ask")).toBe(true);
    expect(existsSync(join(ws(), "ask.txt"))).toBe(false);
  }, 90_000);

  it("plan runs reads and refuses writes and commands with a respond error, no card; the model is told the mode", async () => {
    const s = await q.client.sessions.create.mutate({ title: "plan" });
    await q.client.sessions.setMode.mutate({ sessionId: s.id, mode: "plan" });
    const before = q.fake.requests.length;
    const { events, cards } = await send(s.id, "plan it", [
      calls(
        ["p1", "list_files", { path: "." }],
        ["p2", "write_file", { path: "plan.txt", content: "no\n" }],
        ["p3", "shell", { command: "echo hi > plan2.txt" }],
      ),
      text("here is the plan"),
    ]);
    expect(cards).toEqual([]);
    expect(statusByName(events)).toEqual(["list_files:succeeded", "write_file:blocked", "shell:blocked"]);
    const f = finished(events);
    const refused = started(events)
      .filter((e) => e.name !== "list_files")
      .map((e) => f[e.callId].output);
    for (const out of refused)
      expect(out).toMatch(/^Plan mode is on: \w+ can change files or run things, so it was not run\./);
    expect(existsSync(join(ws(), "plan.txt")) || existsSync(join(ws(), "plan2.txt"))).toBe(false);
    const sent = q.fake.requests.slice(before).map((r) => JSON.stringify(r.body));
    // The note rides on the person's message (first request) and the refusals reached the model.
    expect(sent[0]).toContain(JSON.stringify(modeNote("plan").trimStart()).slice(1, -1));
    expect(sent[1]).toContain("Plan mode is on: write_file can change files");
    const rows = await q.quiver.services.db.toolCall.findMany({ where: { sessionId: s.id }, orderBy: { slot: "asc" } });
    expect(rows.map((r) => [r.name, r.mode, r.status])).toEqual([
      ["list_files", "plan", "succeeded"],
      ["write_file", "plan", "blocked"],
      ["shell", "plan", "blocked"],
    ]);
  }, 90_000);

  it("accept-edits runs write_file, edit_file and apply_patch without a card and still asks for a command", async () => {
    const s = await q.client.sessions.create.mutate({ title: "edits" });
    await q.client.sessions.setMode.mutate({ sessionId: s.id, mode: "accept-edits" });
    const patch = "--- /dev/null\n+++ b/patched.txt\n@@ -0,0 +1 @@\n+patched\n";
    const { events, cards } = await send(s.id, "edit", [
      call("e1", "write_file", { path: "edits.txt", content: "one\n" }),
      calls(
        ["e3", "edit_file", { path: "edits.txt", old_string: "one", new_string: "two" }],
        ["e4", "apply_patch", { patch }],
      ),
      call("e5", "shell", { command: "touch edits2.txt" }),
      text("edited"),
    ]);
    expect(cards).toEqual(["shell"]);
    expect(statusByName(events)).toEqual([
      "write_file:succeeded",
      "edit_file:succeeded",
      "apply_patch:succeeded",
      "shell:rejected",
    ]);
    expect(readFileSync(join(ws(), "edits.txt"), "utf8")).toBe("two\n");
    expect(readFileSync(join(ws(), "patched.txt"), "utf8")).toBe("patched\n");
    expect(started(events).every((e) => e.mode === "accept-edits")).toBe(true);
    const audit = await q.quiver.services.db.auditEvent.findMany({ where: { sessionId: s.id, action: "tool.auto" } });
    expect(audit.filter((a) => (a.detail as { by?: string }).by === "mode")).toHaveLength(3);
  }, 90_000);

  it("auto runs a command without a card, but an org deny still denies and an org ask rule still asks", async () => {
    const s = await q.client.sessions.create.mutate({ title: "auto" });
    await q.client.sessions.setMode.mutate({ sessionId: s.id, mode: "auto" });
    const head = await q.client.policies.current.query();
    await q.client.policies.set.mutate({
      rules: [
        { effect: "deny", command: "rm", reason: "no deleting" },
        { effect: "ask", command: "mkdir" },
      ],
      expectedVersion: head.version,
    });
    try {
      const { events, cards } = await send(s.id, "run", [
        call("u1", "shell", { command: "echo auto > auto.txt" }),
        call("u2", "shell", { command: "rm -f auto.txt" }),
        call("u3", "shell", { command: "mkdir asked" }),
        text("ran"),
      ]);
      expect(cards).toEqual(["shell"]);
      expect(statusByName(events)).toEqual(["shell:succeeded", "shell:blocked", "shell:rejected"]);
      expect(readFileSync(join(ws(), "auto.txt"), "utf8")).toBe("auto\n");
      expect(finished(events)[started(events)[1].callId].output).toMatch(/Denied by org policy .*no deleting/);
    } finally {
      const now = await q.client.policies.current.query();
      await q.client.policies.set.mutate({ rules: [], expectedVersion: now.version });
    }
  }, 90_000);

  it("an org that forbids auto: setMode is refused, and a session already in auto falls back to ask at its next call", async () => {
    const s = await q.client.sessions.create.mutate({ title: "forbidden" });
    await q.client.sessions.setMode.mutate({ sessionId: s.id, mode: "auto" });
    await q.client.policies.setForbiddenModes.mutate({ forbidden: ["auto"] });
    try {
      expect(await q.client.policies.modes.query()).toEqual({ forbidden: ["auto"], canEdit: true });
      const other = await q.client.sessions.create.mutate({ title: "other" });
      await expect(q.client.sessions.setMode.mutate({ sessionId: other.id, mode: "auto" })).rejects.toThrow(
        /Auto mode is forbidden by your org's policy/,
      );
      await expect(q.client.policies.setForbiddenModes.mutate({ forbidden: ["ask"] })).rejects.toThrow(
        /ask cannot be forbidden/,
      );
      // Read: already the effective mode; the row moves at the next dispatch.
      expect(await q.client.sessions.mode.query({ sessionId: s.id })).toEqual({ mode: "ask", forbidden: ["auto"] });
      const { events, cards } = await send(s.id, "run", [
        call("f1", "shell", { command: "touch forbidden.txt" }),
        text("asked"),
      ]);
      expect(cards).toEqual(["shell"]);
      expect(started(events)[0].mode).toBe("ask");
      const switched = events.findLast((e) => e.type === "session.mode");
      expect(switched).toMatchObject({
        type: "session.mode",
        mode: "ask",
        previous: "auto",
        reason: "Auto mode is forbidden by the org; back to Ask.",
      });
      expect((await q.quiver.services.db.session.findUnique({ where: { id: s.id } }))?.mode).toBe("ask");
    } finally {
      await q.client.policies.setForbiddenModes.mutate({ forbidden: [] });
    }
  }, 90_000);

  it("a mode switch never changes the cached prefix: system, tools and earlier messages are byte-identical", async () => {
    const s = await q.client.sessions.create.mutate({ title: "prefix" });
    const before = q.fake.requests.length;
    await send(s.id, "first", [text("first done")]);
    await q.client.sessions.setMode.mutate({ sessionId: s.id, mode: "plan" });
    await send(s.id, "second", [call("x1", "read_file", { path: "edits.txt" }), text("second done")]);
    await q.client.sessions.setMode.mutate({ sessionId: s.id, mode: "accept-edits" });
    await send(s.id, "third", [text("third done")]);
    const bodies = q.fake.requests
      .slice(before)
      .map((r) => r.body as Record<string, unknown> & { messages: unknown[] });
    expect(bodies).toHaveLength(4);
    const strip = (v: unknown) => JSON.stringify(v, (k, x) => (k === "cache_control" ? undefined : x));
    const prefixOf = (b: (typeof bodies)[number], n: number) =>
      strip({ system: b.system, tools: b.tools, messages: b.messages.slice(0, n) });
    for (let i = 1; i < bodies.length; i++) {
      const prev = bodies[i - 1];
      // Everything the previous request sent is the start of this one, byte for byte (system
      // and tools included); only messages are added after it.
      expect(prefixOf(bodies[i], prev.messages.length)).toBe(prefixOf(prev, prev.messages.length));
      expect(strip(bodies[i].tools)).toBe(strip(bodies[0].tools));
    }
    // What changed: the newest message of the request after each switch ends with the note.
    const lastText = (b: (typeof bodies)[number]) => JSON.stringify(b.messages.at(-1));
    expect(lastText(bodies[0])).not.toContain("[Session mode:");
    expect(lastText(bodies[1])).toContain("[Session mode: plan]");
    expect(lastText(bodies[2])).not.toContain("[Session mode:");
    expect(lastText(bodies[3])).toContain("[Session mode: accept-edits]");
  }, 90_000);

  it("plan → exit_plan_mode: keep planning sends the message back; accept and implement switches mode and the turn goes on", async () => {
    const s = await q.client.sessions.create.mutate({ title: "plan flow" });
    await q.client.sessions.setMode.mutate({ sessionId: s.id, mode: "plan" });
    const before = q.fake.requests.length;
    const { events, cards } = await send(
      s.id,
      "plan notes",
      [
        call("x1", "exit_plan_mode", { plan: "# Too vague" }),
        call("x2", "exit_plan_mode", { plan: "# Add notes\n1. write notes.txt" }),
        call("w1", "write_file", { path: "notes.txt", content: "planned\n" }),
        text("implemented"),
      ],
      (ev, n) => {
        if (n === 1)
          void q.client.approvals.answer.mutate({
            approvalId: ev.approvalId,
            choice: "reject",
            message: "say which file",
          });
        else
          void q.client.sessions.acceptPlan.mutate({
            sessionId: s.id,
            approvalId: ev.approvalId,
            mode: "accept-edits",
          });
      },
    );
    expect(cards).toEqual(["exit_plan_mode", "exit_plan_mode"]);
    expect(started(events).map((e) => [e.name, e.mode])).toEqual([
      ["exit_plan_mode", "plan"],
      ["exit_plan_mode", "plan"],
      ["write_file", "accept-edits"],
    ]);
    expect(statusByName(events)).toEqual([
      "exit_plan_mode:rejected",
      "exit_plan_mode:succeeded",
      "write_file:succeeded",
    ]);
    expect(events.findLast((e) => e.type === "session.mode")).toMatchObject({ mode: "accept-edits", previous: "plan" });
    expect(readFileSync(join(ws(), "notes.txt"), "utf8")).toBe("planned\n");
    const bodies = q.fake.requests
      .slice(before)
      .map((r) => r.body as Record<string, unknown> & { messages: unknown[] });
    expect(bodies).toHaveLength(4);
    const last = bodies.map((b) => JSON.stringify(b.messages.at(-1)));
    expect(last[1]).toContain("say which file");
    expect(last[2]).toContain(ACCEPTED);
    expect(last[2]).toContain("[Session mode: accept-edits]");
    const strip = (v: unknown) => JSON.stringify(v, (k, x) => (k === "cache_control" ? undefined : x));
    for (let i = 1; i < bodies.length; i++) {
      const n = bodies[i - 1].messages.length;
      const pre = (b: (typeof bodies)[number]) =>
        strip({ system: b.system, tools: b.tools, messages: b.messages.slice(0, n) });
      expect(pre(bodies[i])).toBe(pre(bodies[i - 1]));
    }
    const answered = await q.quiver.services.db.approval.findFirst({ where: { sessionId: s.id, status: "approved" } });
    await expect(
      q.client.sessions.acceptPlan.mutate({ sessionId: s.id, approvalId: answered!.id, mode: "auto" }),
    ).rejects.toThrow(/already answered/);
    // Outside plan mode the tool is refused, no card.
    const again = await send(s.id, "again", [call("x3", "exit_plan_mode", { plan: "# more" }), text("ok")]);
    expect(again.cards).toEqual([]);
    expect(statusByName(again.events)).toEqual(["exit_plan_mode:blocked"]);
  }, 90_000);
});
