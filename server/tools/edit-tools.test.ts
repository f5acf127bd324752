// Per-model edit tools: the rule on model ids, and, end to end on both wire formats through the
// fake provider, the tools list each model is really sent: a GPT-family model gets apply_patch
// and not edit_file/write_file, Claude the reverse; a switch of model mid-session, and a restart
// after it, keep the session's first choice and its catalog's bytes.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { useTestDb } from "../testing/db";
import { createEventHub, type EventHub } from "../hub/events";
import { seedSession } from "../testing/hub";
import { eventsUntilFinished, fakeProviderEnv, fastRetries, testDispatcher, useFakeProvider } from "../testing/engine";
import { createEngine, type Engine } from "../engine/engine";
import { toolActivationStore } from "../services/tool-activations";
import { builtinTools } from "./builtin";
import { editToolsFor } from "./edit-tools";
import { ToolRegistry } from "./registry";
import { ToolSessions } from "./sessions";
import { resolveCall } from "./resolve";
import { engineCombos } from "../testing/engine-suite";

describe("editToolsFor", () => {
  it("gives apply_patch to the GPT family and edit_file/write_file to everyone else", () => {
    for (const m of [
      "gpt-5",
      "gpt-5.1-codex",
      "GPT-4.1-mini",
      "openai/gpt-5",
      "chatgpt-4o-latest",
      "o1",
      "o3-mini",
      "o4-mini",
      "codex-mini-latest",
    ])
      expect(editToolsFor(m), m).toBe("patch");
    for (const m of [
      "claude-sonnet-4-5",
      "anthropic/claude-opus-4",
      "gpt-oss-120b",
      "gpt-3.5-turbo",
      "llama3.1:8b",
      "qwen2.5-coder",
      "deepseek-chat",
      "o2-thing",
      "",
      null,
      undefined,
    ])
      expect(editToolsFor(m), String(m)).toBe("replace");
  });
});

describe("a session's hidden edit tools", () => {
  it("are left out of what is offered but a call of one still resolves (a conversation begun with another model)", async () => {
    const sessions = new ToolSessions(new ToolRegistry(builtinTools()), { firstModel: async () => "gpt-5" });
    const state = await sessions.load("s1", "claude-sonnet-4-5");
    const offered = state.entries().map((e) => e.name);
    expect(offered).toContain("apply_patch");
    expect(offered).not.toContain("edit_file");
    expect(JSON.parse(state.json()).map((e: { name: string }) => e.name)).toEqual(offered);
    const r = resolveCall(
      state,
      { name: "edit_file", rawArguments: JSON.stringify({ path: "a.ts", old_string: "a", new_string: "b" }) },
      { strict: false },
    );
    expect(r.ok).toBe(true);
  });
});

const combos = engineCombos();

describe.each(combos)("edit tools per model on %s with the %s wire format", (dbProvider, kind) => {
  const t = useTestDb(dbProvider);
  const provider = useFakeProvider();
  let hub: EventHub;
  const engines: Engine[] = [];
  const registry = new ToolRegistry(builtinTools());
  // A fresh ToolSessions is what a server restart starts from.
  const start = () => {
    const tools = new ToolSessions(registry, toolActivationStore(t.current.db));
    const engine = createEngine({
      db: t.current.db,
      rows: t.current.rows,
      hub,
      dispatcher: testDispatcher(),
      env: fakeProviderEnv(kind, provider.current),
      catalog: { catalog: async (sessionId, model) => (await tools.load(sessionId, model)).entries() },
      retry: fastRetries,
      systemPrompt: "SYSTEM",
    });
    engines.push(engine);
    return engine;
  };
  const sentTools = (i: number) => {
    const body = provider.current.requests[i].body as { tools: { name?: string; function?: { name: string } }[] };
    return body.tools.map((tool) => tool.name ?? tool.function!.name);
  };
  const turn = async (engine: Engine, sessionId: string, userId: string) => {
    provider.current.enqueue({ blocks: [{ type: "text", text: "ok" }] });
    const { turnId } = await engine.sendMessage(sessionId, { userId }, "hello");
    await eventsUntilFinished(hub, sessionId, turnId);
  };

  beforeEach(() => {
    hub = createEventHub(t.current.db, { url: t.current.url });
  });
  afterEach(async () => {
    for (const e of engines.splice(0)) await e.dispose();
    await hub.dispose();
  });

  it("sends apply_patch to a GPT model and edit_file/write_file to Claude", async () => {
    const engine = start();
    const gpt = await seedSession(t.current.db);
    await t.current.db.session.update({ where: { id: gpt.sessionId }, data: { model: "gpt-5" } });
    await turn(engine, gpt.sessionId, gpt.userId);
    expect(provider.current.requests[0].format).toBe(kind);
    expect(sentTools(0)).toContain("apply_patch");
    expect(sentTools(0)).not.toContain("edit_file");
    expect(sentTools(0)).not.toContain("write_file");
    expect(sentTools(0)).toContain("tool_program");

    const claude = await seedSession(t.current.db);
    await t.current.db.session.update({ where: { id: claude.sessionId }, data: { model: "claude-sonnet-4-5" } });
    await turn(engine, claude.sessionId, claude.userId);
    expect(sentTools(1)).toEqual(expect.arrayContaining(["edit_file", "write_file", "tool_program"]));
    expect(sentTools(1)).not.toContain("apply_patch");
  }, 60_000);

  it("keeps the first model's choice, byte for byte, after a switch of model and a restart", async () => {
    const engine = start();
    const s = await seedSession(t.current.db);
    await t.current.db.session.update({ where: { id: s.sessionId }, data: { model: "gpt-5" } });
    await turn(engine, s.sessionId, s.userId);
    await t.current.db.session.update({ where: { id: s.sessionId }, data: { model: "claude-sonnet-4-5" } });
    await turn(engine, s.sessionId, s.userId);
    await turn(start(), s.sessionId, s.userId);
    const [first, switched, restarted] = provider.current.requests.map((r) =>
      JSON.stringify((r.body as { tools: unknown }).tools),
    );
    expect((provider.current.requests[1].body as { model: string }).model).toBe("claude-sonnet-4-5");
    expect(switched).toBe(first);
    expect(restarted).toBe(first);
    expect(sentTools(2)).toContain("apply_patch");
    expect(sentTools(2)).not.toContain("edit_file");
  }, 60_000);
});
