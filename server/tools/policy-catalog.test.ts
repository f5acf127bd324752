// A tool the org policy denies outright is not offered (issue 23, item 10): through the engine
// against the fake provider (which records every request) and the real pipeline, a deny of
// fetch_url removes it from the request's tools, the bytes stay the same for a policy version,
// and a forged call of it is still denied by the policy.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { testDatabases, useTestDb } from "../testing/db";
import { createEventHub, type EventHub } from "../hub/events";
import { seedSession } from "../testing/hub";
import { eventsUntilFinished, fakeProviderEnv, fastRetries, useFakeProvider } from "../testing/engine";
import { createEngine, type Engine } from "../engine/engine";
import { fetchTool, type Harness, makePipeline, readTool, shellTool, toolStates } from "../testing/pipeline";
import { createPolicyService } from "../services/policies";
import { deniedTools, policyCatalog } from "./policy-catalog";

describe.each(testDatabases())("policy-shaped catalog on %s", (dbProvider) => {
  const t = useTestDb(dbProvider);
  const provider = useFakeProvider();
  let hub: EventHub;
  let engine: Engine;
  let h: Harness;
  const states = toolStates([readTool, shellTool, fetchTool]);

  beforeEach(() => {
    hub = createEventHub(t.current.db, { url: t.current.url });
    h = makePipeline(t.current, { deps: { tools: states } });
    const policies = createPolicyService(t.current.db);
    engine = createEngine({
      db: t.current.db,
      rows: t.current.rows,
      hub,
      dispatcher: h.pipeline,
      env: fakeProviderEnv("anthropic", provider.current),
      retry: fastRetries,
      systemPrompt: "SYSTEM",
      catalog: {
        catalog: async (sessionId) => {
          const s = await t.current.db.session.findUnique({ where: { id: sessionId }, select: { orgId: true } });
          return policyCatalog(states.forSession(sessionId), await policies.load(s!.orgId));
        },
      },
    });
  });
  afterEach(async () => {
    await engine.dispose();
    await hub.dispose();
    await h.close();
  });

  it("deny fetch_url: not in the request's tools, and a forged call of it is denied by the policy", async () => {
    const { sessionId, userId, orgId } = await seedSession(t.current.db);
    const fake = provider.current;
    fake.enqueue({ blocks: [{ type: "text", text: "first" }] });
    const first = await engine.sendMessage(sessionId, { userId }, "hello");
    await eventsUntilFinished(hub, sessionId, first.turnId);
    const toolsOf = (i: number) => (fake.requests[i].body as { tools?: { name: string }[] }).tools?.map((x) => x.name);
    expect(toolsOf(0)).toEqual(["fetch_url", "read_file", "shell"]);

    await t.current.db.orgPolicy.create({
      data: {
        orgId,
        version: 1,
        rules: [
          { effect: "deny", tool: "fetch_url", reason: "no web" },
          { effect: "deny", tool: "shell", command: "rm" },
        ],
      },
    });
    fake.enqueue(
      { blocks: [{ type: "tool_call", name: "fetch_url", arguments: '{"url":"https://example.com"}' }] },
      { blocks: [{ type: "text", text: "denied, fine" }] },
    );
    const second = await engine.sendMessage(sessionId, { userId }, "fetch it anyway");
    const events = await eventsUntilFinished(hub, sessionId, second.turnId);
    // shell is only denied for one command: still offered
    expect(toolsOf(1)).toEqual(["read_file", "shell"]);
    expect(toolsOf(2)).toEqual(["read_file", "shell"]);
    expect(JSON.stringify((fake.requests[1].body as { tools: unknown }).tools)).toBe(
      JSON.stringify((fake.requests[2].body as { tools: unknown }).tools),
    );
    const finished = events.find((e) => e.type === "tool.finished") as { status: string; output: string } | undefined;
    expect(finished?.status).toBe("blocked");
    expect(finished?.output).toMatch(/Denied by org policy v1.*no web/);
    expect(h.exec.calls).toHaveLength(0);
    const row = await t.current.db.toolCall.findFirst({ where: { sessionId, name: "fetch_url" } });
    expect(row?.decision).toBe("policy_deny");
  });

  it("only outright denies hide a tool: command- and host-scoped rules, asks and a broken policy do not", () => {
    const tools = [readTool, shellTool, fetchTool];
    expect([
      ...deniedTools(tools, { ok: true, version: 3, rules: [{ effect: "deny", capability: "Network" }] }),
    ]).toEqual(["fetch_url"]);
    expect([
      ...deniedTools(tools, {
        ok: true,
        version: 3,
        rules: [
          { effect: "deny", tool: "fetch_url", host: "evil.com" },
          { effect: "ask", tool: "read_file" },
        ],
      }),
    ]).toEqual([]);
    expect([...deniedTools(tools, { ok: true, version: 3, rules: [{ effect: "deny", tool: "*" }] })].sort()).toEqual([
      "fetch_url",
      "read_file",
      "shell",
    ]);
    expect([...deniedTools(tools, { ok: false, error: "broken" })]).toEqual([]);
  });
});
