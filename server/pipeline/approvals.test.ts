import { describe, expect, it } from "vitest";
import { testDatabases, useTestDb } from "../testing/db";
import {
  approvalCards,
  call,
  type Harness,
  newTurn,
  request,
  ScriptedExecutor,
  usePipelines,
  waitFor,
} from "../testing/pipeline";
import { editFileTool } from "../tools/builtin/edit_file";
import { appRouter } from "../api/root";
import type { Services } from "../services/types";

describe.each(testDatabases())("approvals on %s", (provider) => {
  const t = useTestDb(provider);
  const setup = usePipelines(t);
  const nextCard = (h: Harness, sessionId: string, n: number) =>
    waitFor(() => approvalCards(h, sessionId)[n - 1], `approval card ${n}`);

  it("shows the card, runs once when approved once, and asks again next time", async () => {
    const h = setup();
    const s = await newTurn(t.current);
    const p = h.pipeline.dispatch(request(h, s, [call("shell", { command: "npm test" })]));
    const card = await nextCard(h, s.session.id, 1);
    expect(card.request).toMatchObject({
      tool: "shell",
      command: "npm test",
      covers: "npm test *",
      reason: "Runs a command in your workspace.",
    });
    expect(h.exec.calls).toHaveLength(0);
    const row = await t.current.db.approval.findUnique({ where: { id: card.approvalId } });
    expect(row).toMatchObject({ status: "pending", fingerprint: "shell:cmd:npm test" });
    await h.pipeline.answerApproval(s.actor, card.approvalId, "once");
    const out = await p;
    expect(out.results[0]).toMatchObject({ isError: false, content: "ok" });
    expect(h.exec.calls).toHaveLength(1);
    const resolved = h.events.find((e) => e.event.type === "approval.resolved")!.event;
    expect(resolved).toMatchObject({ decision: "approved_once", by: s.user.id });
    const audit = await t.current.db.auditEvent.findFirst({
      where: { sessionId: s.session.id, action: "tool.approved_once" },
    });
    expect(audit).toMatchObject({ actorId: s.user.id });
    expect(await t.current.db.toolCall.findFirst({ where: { turnId: s.turn.id } })).toMatchObject({
      status: "succeeded",
      decision: "approved_once",
    });

    const again = h.pipeline.dispatch(request(h, s, [call("shell", { command: "npm test" })]));
    const card2 = await nextCard(h, s.session.id, 2);
    await expect(h.pipeline.answerApproval(s.actor, card.approvalId, "once")).rejects.toThrow(/already approved/);
    await h.pipeline.answerApproval(s.actor, card2.approvalId, "reject");
    expect((await again).results[0].content).toMatch(/rejected/);
  });

  it("a session approval covers the same command by arity, never another", async () => {
    const h = setup();
    const s = await newTurn(t.current);
    const first = h.pipeline.dispatch(request(h, s, [call("shell", { command: "npm test" })]));
    await h.pipeline.answerApproval(s.actor, (await nextCard(h, s.session.id, 1)).approvalId, "session");
    await first;
    const covered = await h.pipeline.dispatch(request(h, s, [call("shell", { command: "npm test -- --watch" })]));
    expect(covered.results[0].isError).toBe(false);
    expect(approvalCards(h, s.session.id)).toHaveLength(1);
    const coveredRow = await t.current.db.toolCall.findFirst({
      where: { sessionId: s.session.id },
      orderBy: { createdAt: "desc" },
    });
    expect(coveredRow).toMatchObject({ decision: "approved_session" });
    // the card says why it ran unasked; the call approved in its card does not
    const running = h.events
      .filter((e) => e.event.type === "tool.status" && e.event.status === "running")
      .map((e) => e.event);
    expect(running).toHaveLength(2);
    expect(running[0]).not.toHaveProperty("approvedBy");
    expect(running[1]).toMatchObject({
      callId: coveredRow!.id,
      approvedBy: { kind: "session", reason: "Covered by an approval for this session." },
    });
    const publish = h.pipeline.dispatch(request(h, s, [call("shell", { command: "npm publish" })]));
    const card = await nextCard(h, s.session.id, 2);
    expect(card.request.command).toBe("npm publish");
    await h.pipeline.answerApproval(s.actor, card.approvalId, "reject", "never publish from here");
    const out = await publish;
    expect(out.results[0].content).toMatch(/never publish from here/);
    // the rejection is remembered for these exact arguments: no second card
    const again = await h.pipeline.dispatch(request(h, s, [call("shell", { command: "npm publish" })]));
    expect(again.results[0].content).toMatch(/already rejected this exact call.*never publish from here/);
    expect(approvalCards(h, s.session.id)).toHaveLength(2);
    expect(h.exec.calls.map((c) => (c.input as { command: string }).command)).toEqual([
      "npm test",
      "npm test -- --watch",
    ]);
  });

  it("an org deny is never asked and never approved away, even with a session approval", async () => {
    const h = setup();
    const s = await newTurn(t.current);
    const first = h.pipeline.dispatch(request(h, s, [call("shell", { command: "git push" })]));
    await h.pipeline.answerApproval(s.actor, (await nextCard(h, s.session.id, 1)).approvalId, "session");
    await first;
    await t.current.db.orgPolicy.create({
      data: {
        orgId: s.org.id,
        version: 1,
        rules: [{ id: "no-push", effect: "deny", command: "git push", reason: "CI pushes" }],
      },
    });
    const out = await h.pipeline.dispatch(request(h, s, [call("shell", { command: "git add . && git push --force" })]));
    expect(out.results[0].content).toMatch(/Denied by org policy v1, rule "no-push".*CI pushes/);
    expect(approvalCards(h, s.session.id)).toHaveLength(1);
    expect(h.exec.calls).toHaveLength(1);
    const audit = await t.current.db.auditEvent.findFirst({
      where: { sessionId: s.session.id, action: "tool.policy_deny" },
    });
    expect(audit?.detail).toMatchObject({ by: "policy", policyVersion: 1 });
  });

  it("a policy that cannot be loaded denies all but read-only calls", async () => {
    const h = setup();
    const s = await newTurn(t.current);
    await t.current.db.orgPolicy.create({
      data: { orgId: s.org.id, version: 1, rules: [{ effect: "sometimes", tool: "*" }] },
    });
    const out = await h.pipeline.dispatch(
      request(h, s, [call("read_file", { path: "a" }), call("shell", { command: "ls" })]),
    );
    expect(out.results[0].isError).toBe(false);
    expect(out.results[1].content).toMatch(/org policy could not be loaded/);
  });

  it("cancel wins over a pending approval", async () => {
    const h = setup();
    const s = await newTurn(t.current);
    const ctl = new AbortController();
    const p = h.pipeline.dispatch(
      request(h, s, [call("shell", { command: "make deploy" }), call("read_file", { path: "x" })], {
        signal: ctl.signal,
      }),
    );
    const card = await nextCard(h, s.session.id, 1);
    ctl.abort();
    const out = await p;
    expect(out.results[0].content).toMatch(/Cancelled/);
    expect(out.results[1].content).toMatch(/cancelled/);
    expect(h.exec.calls).toHaveLength(0);
    await waitFor(
      async () => (await t.current.db.approval.findUnique({ where: { id: card.approvalId } }))?.status === "cancelled",
      "approval cancelled",
    );
    await expect(h.pipeline.answerApproval(s.actor, card.approvalId, "once")).rejects.toThrow(/already cancelled/);
  });

  it("validates before asking: a call that cannot run gets no card", async () => {
    const h = setup();
    const s = await newTurn(t.current);
    await t.current.db.orgPolicy.create({
      data: { orgId: s.org.id, version: 1, rules: [{ effect: "ask", tool: "read_file" }] },
    });
    const out = await h.pipeline.dispatch(request(h, s, [call("read_file", { path: "../etc/passwd" })]));
    expect(out.results[0].content).toMatch(/inside the workspace/);
    expect(approvalCards(h, s.session.id)).toHaveLength(0);
  });

  it("shows an edit as the runner's diff of the real file, and asks nothing about an edit that cannot apply", async () => {
    const realDiff =
      "--- a/src/app.ts\n+++ b/src/app.ts\n@@ -41,3 +41,3 @@\n const a = 1;\n-const b = 2;\n+const b = 3;\n const c = 4;\n";
    const exec = new ScriptedExecutor((req) => {
      if (req.op !== "preview_change") return { result: { ok: true, output: "Edited." } };
      const input = (req.input as { input: { old_string: string } }).input;
      return input.old_string === "missing"
        ? {
            result: {
              ok: true,
              output: "old_string was not found in src/app.ts (0 occurrences)",
              meta: { refused: true },
            },
          }
        : { result: { ok: true, output: realDiff, meta: { path: "src/app.ts" } } };
    });
    const h = setup({ exec, tools: [editFileTool] });
    const s = await newTurn(t.current);
    const p = h.pipeline.dispatch(
      request(h, s, [
        call("edit_file", { path: "src/app.ts", old_string: "const b = 2;", new_string: "const b = 3;" }),
      ]),
    );
    const card = await nextCard(h, s.session.id, 1);
    expect(card.request.diff).toBe(realDiff);
    await h.pipeline.answerApproval(s.actor, card.approvalId, "once");
    expect((await p).results[0]).toMatchObject({ isError: false, content: "Edited." });

    const refused = await h.pipeline.dispatch(
      request(h, s, [call("edit_file", { path: "src/app.ts", old_string: "missing", new_string: "x" })]),
    );
    expect(refused.results[0]).toMatchObject({
      isError: true,
      content: expect.stringMatching(/not found in src\/app.ts/),
    });
    expect(approvalCards(h, s.session.id)).toHaveLength(1);
    expect(exec.calls.filter((c) => c.op === "edit_file")).toHaveLength(1);
  });

  it("falls back to the input's own diff when the runner cannot preview", async () => {
    const exec = new ScriptedExecutor((req) =>
      req.op === "preview_change"
        ? { result: { ok: false, output: 'unknown operation "preview_change"' } }
        : { result: { ok: true, output: "Edited." } },
    );
    const h = setup({ exec, tools: [editFileTool] });
    const s = await newTurn(t.current);
    const p = h.pipeline.dispatch(
      request(h, s, [call("edit_file", { path: "a.ts", old_string: "one", new_string: "two" })]),
    );
    const card = await nextCard(h, s.session.id, 1);
    expect(card.request.diff).toMatch(/-one\n\+two/);
    await h.pipeline.answerApproval(s.actor, card.approvalId, "once");
    expect((await p).results[0].isError).toBe(false);
  });

  it("only the session's creator answers (not even an org admin); other orgs see nothing", async () => {
    const h = setup();
    const s = await newTurn(t.current);
    const p = h.pipeline.dispatch(request(h, s, [call("write_file", { path: "a.txt", content: "hi\n" })]));
    const card = await nextCard(h, s.session.id, 1);
    expect(card.request.diff).toMatch(/\+hi/);
    const member = { userId: "someone-else", orgId: s.org.id, role: "member" as const };
    await expect(h.pipeline.answerApproval(member, card.approvalId, "once")).rejects.toThrow(/another member.s/);
    await expect(
      h.pipeline.answerApproval({ userId: "admin-2", orgId: s.org.id, role: "admin" }, card.approvalId, "once"),
    ).rejects.toMatchObject({ code: "FORBIDDEN" });
    await expect(h.pipeline.answerApproval({ ...s.actor, orgId: "other" }, card.approvalId, "once")).rejects.toThrow(
      /No such session/,
    );
    expect(await h.pipeline.pendingApprovals(s.actor, s.session.id)).toHaveLength(1);
    await h.pipeline.answerApproval(s.actor, card.approvalId, "once");
    expect((await p).results[0].isError).toBe(false);
    expect(await h.pipeline.pendingApprovals(s.actor, s.session.id)).toHaveLength(0);
  });

  it("is answered through the approvals router", async () => {
    const h = setup();
    const s = await newTurn(t.current);
    const caller = appRouter.createCaller({
      services: { approvals: h.pipeline, db: t.current.db } as unknown as Services,
      actor: s.actor,
    });
    const p = h.pipeline.dispatch(request(h, s, [call("shell", { command: "rm -rf build" })]));
    await nextCard(h, s.session.id, 1);
    const [pending] = await caller.approvals.pending({ sessionId: s.session.id });
    expect(pending.request).toMatchObject({ command: "rm -rf build" });
    await caller.approvals.answer({ approvalId: pending.approvalId, choice: "reject", message: "keep the cache" });
    expect((await p).results[0].content).toMatch(/keep the cache/);
    await expect(caller.approvals.answer({ approvalId: pending.approvalId, choice: "once" })).rejects.toMatchObject({
      code: "CONFLICT",
    });
  });

  it("a pending approval survives a restart: answered later, it runs exactly once", async () => {
    const execA = new ScriptedExecutor();
    const a = setup({ exec: execA });
    const s = await newTurn(t.current);
    const c = call("shell", { command: "npm run migrate" });
    const p = a.pipeline.dispatch(request(a, s, [c]));
    const card = await nextCard(a, s.session.id, 1);
    a.pipeline.dispose(); // the server stops
    const interrupted = await p;
    expect(interrupted.results[0].content).toMatch(/server restarted/);
    expect(await t.current.db.approval.findUnique({ where: { id: card.approvalId } })).toMatchObject({
      status: "pending",
    });
    await t.current.db.turn.update({ where: { id: s.turn.id }, data: { status: "interrupted" } });

    const execB = new ScriptedExecutor(() => ({ result: { ok: true, output: "migrated" } }));
    const b = setup({ exec: execB });
    expect(await b.pipeline.recover()).toEqual({ interrupted: 0, settled: 0 });
    expect((await b.pipeline.pendingApprovals(s.actor, s.session.id)).map((x) => x.approvalId)).toEqual([
      card.approvalId,
    ]);
    await b.pipeline.answerApproval(s.actor, card.approvalId, "once");
    await waitFor(() => b.settled.length === 1, "orphan settled");
    const row = await t.current.db.toolCall.findFirst({ where: { turnId: s.turn.id } });
    expect(row).toMatchObject({ status: "succeeded", result: "migrated", decision: "approved_once" });
    expect(b.events.some((e) => e.event.type === "tool.finished")).toBe(true);
    // the engine resumes the turn: the stored result comes back, nothing runs again
    const resumed = await b.pipeline.dispatch(request(b, s, [c]));
    expect(resumed.results[0]).toMatchObject({ content: "migrated", isError: false });
    expect(execA.calls).toHaveLength(0);
    expect(execB.calls).toHaveLength(1);
    await expect(b.pipeline.answerApproval(s.actor, card.approvalId, "once")).rejects.toThrow(/already approved/);
  });

  it("a resumed turn re-attaches to its pending approval without a second card", async () => {
    const a = setup();
    const s = await newTurn(t.current);
    const c = call("shell", { command: "cargo publish" });
    const p = a.pipeline.dispatch(request(a, s, [c]));
    const card = await nextCard(a, s.session.id, 1);
    a.pipeline.dispose();
    await p;
    const b = setup();
    const resumed = b.pipeline.dispatch(request(b, s, [c]));
    await new Promise((r) => setTimeout(r, 150));
    expect(approvalCards(b, s.session.id)).toHaveLength(0);
    await b.pipeline.answerApproval(s.actor, card.approvalId, "reject", "not today");
    const out = await resumed;
    expect(out.results[0].content).toMatch(/not today/);
    expect(b.settled).toHaveLength(0);
    expect(b.exec.calls).toHaveLength(0);
    expect(await t.current.db.toolCall.findFirst({ where: { turnId: s.turn.id } })).toMatchObject({
      status: "rejected",
    });
  });

  it("start-up recovery fails calls cut off mid-run", async () => {
    const exec = new ScriptedExecutor(() => ({ delayMs: 10_000 }));
    const a = setup({ exec });
    const s = await newTurn(t.current);
    const p = a.pipeline.dispatch(request(a, s, [call("read_file", { path: "a" })]));
    await waitFor(() => exec.inFlight === 1, "running");
    await t.current.db.turn.update({ where: { id: s.turn.id }, data: { status: "interrupted" } });
    const b = setup();
    const r = await b.pipeline.recover();
    expect(r.interrupted).toBeGreaterThanOrEqual(1);
    expect(await t.current.db.toolCall.findFirst({ where: { turnId: s.turn.id } })).toMatchObject({
      status: "failed",
      isError: true,
    });
    a.pipeline.dispose();
    await p;
  });
});
