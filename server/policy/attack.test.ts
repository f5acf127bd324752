// Issue 22, item 1, end to end through the real pipeline, policy service and database: the
// attack as an agent would run it — get `touch` approved for the session, then hide a second
// command behind a newline — with and without the org's deny on `git push`; and an opaque line
// whose card says the policy could not check it.
import { describe, expect, it } from "vitest";
import { testDatabases, useTestDb } from "../testing/db";
import { approvalCards, call, type Harness, newTurn, request, usePipelines, waitFor } from "../testing/pipeline";
import { shellTool } from "../tools/builtin/shell";

describe.each(testDatabases())("the newline attack on %s", (provider) => {
  const t = useTestDb(provider);
  const setup = usePipelines(t);
  const nextCard = (h: Harness, sessionId: string, n: number) =>
    waitFor(() => approvalCards(h, sessionId)[n - 1], `approval card ${n}`);
  const commandsRun = (h: Harness) => h.exec.calls.map((c) => (c.input as { command?: string }).command);

  async function touchApproved(h: Harness, s: Awaited<ReturnType<typeof newTurn>>) {
    const first = h.pipeline.dispatch(request(h, s, [call("shell", { command: "touch x.txt" })]));
    await h.pipeline.answerApproval(s.actor, (await nextCard(h, s.session.id, 1)).approvalId, "session");
    await first;
  }

  it("a second line does not ride the session approval of `touch`", async () => {
    const h = setup({ tools: [shellTool] });
    const s = await newTurn(t.current);
    await touchApproved(h, s);
    const attack = "touch y.txt\ngit push origin HEAD:refs/heads/x\npython3 -c 'import os; os.system(\"id\")'";
    const p = h.pipeline.dispatch(request(h, s, [call("shell", { command: attack })]));
    const card = await nextCard(h, s.session.id, 2);
    expect(card.request.command).toBe(attack);
    expect(commandsRun(h)).toEqual(["touch x.txt"]);
    await h.pipeline.answerApproval(s.actor, card.approvalId, "reject");
    await p;
    expect(commandsRun(h)).toEqual(["touch x.txt"]);
  });

  it("the org's deny of `git push` denies it behind a newline, approved `touch` or not", async () => {
    const h = setup({ tools: [shellTool] });
    const s = await newTurn(t.current);
    await t.current.db.orgPolicy.create({
      data: { orgId: s.org.id, version: 1, rules: [{ id: "no-push", effect: "deny", command: "git push" }] },
    });
    await touchApproved(h, s);
    for (const attack of [
      "touch y.txt\ngit push origin HEAD",
      "touch y.txt\r\ngit push",
      "touch y.txt & git push",
      "touch y; { git push; }",
    ]) {
      const out = await h.pipeline.dispatch(request(h, s, [call("shell", { command: attack })]));
      expect(out.results[0].content, attack).toMatch(/Denied by org policy v1, rule "no-push"/);
    }
    expect(approvalCards(h, s.session.id)).toHaveLength(1);
    expect(commandsRun(h)).toEqual(["touch x.txt"]);
  });

  it("a line the policy cannot see through is asked about, and its card says so", async () => {
    const h = setup({ tools: [shellTool] });
    const s = await newTurn(t.current);
    await t.current.db.orgPolicy.create({
      data: { orgId: s.org.id, version: 1, rules: [{ effect: "deny", command: "git push" }] },
    });
    await touchApproved(h, s);
    const p = h.pipeline.dispatch(request(h, s, [call("shell", { command: "touch y.txt; $X push" })]));
    const card = await nextCard(h, s.session.id, 2);
    expect(card.request.policyUnchecked).toMatch(
      /could not check `\$X push` \(the program is only known at run time\)/,
    );
    expect(card.request.reason).toMatch(/could not check every command/);
    expect(card.request.covers).toMatch(/asked about every time/);
    await h.pipeline.answerApproval(s.actor, card.approvalId, "reject");
    await p;
    expect(commandsRun(h)).toEqual(["touch x.txt"]);
  });
});
