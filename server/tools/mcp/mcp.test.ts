// The MCP client against the test server run as real processes (stdio children and one over
// Streamable HTTP on a real port), its tools called through the real pipeline on a test database.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testDatabases, useTestDb } from "../../testing/db";
import {
  approvalCards,
  call,
  type Harness,
  newTurn,
  readTool,
  request,
  usePipelines,
  waitFor,
} from "../../testing/pipeline";
import { ToolRegistry } from "../registry";
import { ToolSessions } from "../sessions";
import { startMcp, type McpClients } from "./index";
import { startHttpServer, stdioEntry, type HttpServerChild } from "../../testing/mcp";

const registry = new ToolRegistry();
const sessions = new ToolSessions(registry);
const logs: string[] = [];
let mcp: McpClients;
let web: HttpServerChild;

beforeAll(async () => {
  web = await startHttpServer();
  const dir = mkdtempSync(join(tmpdir(), "quiver-mcp-"));
  const configPath = join(dir, "mcp.json");
  const mcpServers = {
    t: stdioEntry({ trusted: true }),
    short: stdioEntry({ timeoutMs: 700, trusted: true }),
    web: { url: web.url, trusted: true },
    plain: stdioEntry(),
    broken: { command: join(dir, "no-such-server") },
  };
  writeFileSync(configPath, JSON.stringify({ mcpServers }));
  // Three tsx-started stdio servers at once on a loaded 2-core machine took over the default 15 s
  // to answer, and every test then failed for want of their tools.
  mcp = await startMcp({ configPath, registry, log: (l) => logs.push(l), connectTimeoutMs: 60_000 });
});

afterAll(async () => {
  await mcp?.dispose();
  await web?.stop();
});

// Every MCP result reaches the model inside <external_content>; most assertions look inside it.
const WRAPPED = /^<external_content source="mcp:[^"]+">\n([\s\S]*)\n<\/external_content>$/;
const text = (r: { content: string }) => WRAPPED.exec(r.content)?.[1] ?? r.content;

describe("MCP tools in the registry", () => {
  it("lists every page of every server's tools under provider-safe names; a broken server is left out", () => {
    const names = registry
      .tools()
      .map((t) => t.name)
      .sort();
    const ofT = ["add_tool", "crash", "echo", "fail", "odd_name_v2", "rich", "sleep", "stats", "write_note"].map(
      (n) => `mcp__t__${n}`,
    );
    expect(names.filter((n) => n.startsWith("mcp__t__"))).toEqual(ofT.sort());
    expect(names.filter((n) => n.startsWith("mcp__web__"))).toHaveLength(9);
    expect(names.some((n) => n.includes("broken"))).toBe(false);
    expect(logs).toContainEqual(
      expect.stringMatching(/^mcp: the MCP server broken did not start: command not found .*; its tools are absent$/),
    );
    expect(logs).toContain("mcp: t started with 9 tool(s)");
  });

  it("sanitises schemas, maps annotations, and defers them behind tool_search", () => {
    const note = registry.get("mcp__t__write_note")!;
    expect(note.jsonSchema).toEqual({
      type: "object",
      properties: { note: { type: "string" }, tag: { type: ["string", "null"] } },
      required: ["note"],
    });
    expect(note).toMatchObject({ source: "external", executor: "server", mcpServer: "t", deferLoading: true });
    expect([note.approvalFor({}), note.isReadOnly({}), note.isDestructive({}), note.isOpenWorld({})]).toEqual([
      "required",
      false,
      true,
      true,
    ]);
    const echo = registry.get("mcp__t__echo")!;
    expect([echo.approvalFor({}), echo.isReadOnly({}), echo.isConcurrencySafe({})]).toEqual(["auto", true, true]);
    expect(registry.get("mcp__t__rich")!.capabilities).toEqual(["Network"]);
    expect(registry.catalog().loaded.map((t) => t.name)).toEqual(["tool_search"]);
    expect(registry.catalog().loaded[0].description).toMatch(/- mcp__t__echo: Echoes the text back\./);
    // the read-only surface keeps only tools that say they are read-only
    const readonly = registry.catalog("readonly");
    expect([readonly.get("mcp__t__echo")?.name, readonly.get("mcp__t__write_note")]).toEqual([
      "mcp__t__echo",
      undefined,
    ]);
  });
});

describe.each(testDatabases())("MCP calls through the pipeline on %s", (provider) => {
  const t = useTestDb(provider);
  const setup = usePipelines(t);
  const harness = () => setup({ deps: { tools: { forSession: (id) => sessions.forSession(id) } } });

  // A session whose deferred MCP tools were found through tool_search, as the model would.
  async function session(h: Harness, tools: string[]) {
    const s = await newTurn(t.current);
    await sessions.load(s.session.id);
    const found = await h.pipeline.dispatch(
      request(h, s, [call("tool_search", { query: `select:${tools.join(",")}` })]),
    );
    expect(text(found.results[0])).toMatch(/^Loaded \d+ tool/);
    return s;
  }

  it("a readOnlyHint tool runs unasked; a tool without annotations waits for approval", async () => {
    const h = harness();
    const s = await session(h, ["mcp__t__echo", "mcp__t__write_note"]);
    const echo = await h.pipeline.dispatch(request(h, s, [call("mcp__t__echo", { text: "hello" })]));
    expect(echo.results[0]).toMatchObject({
      isError: false,
      content: '<external_content source="mcp:t">\nhello\n</external_content>',
    });
    expect(approvalCards(h, s.session.id)).toHaveLength(0);

    const pending = h.pipeline.dispatch(request(h, s, [call("mcp__t__write_note", { note: "buy milk", tag: null })]));
    const card = await waitFor(() => approvalCards(h, s.session.id)[0], "approval card");
    expect(card.request).toMatchObject({ tool: "mcp__t__write_note" });
    await h.pipeline.answerApproval(s.actor, card.approvalId, "once");
    const noted = (await pending).results[0];
    expect([noted.isError, text(noted)]).toEqual([false, "noted: buy milk"]);
    const row = await t.current.db.toolCall.findFirst({
      where: { sessionId: s.session.id, name: "mcp__t__write_note" },
    });
    expect(row).toMatchObject({ status: "succeeded", decision: "approved_once" });
    // the slot validates arguments before the server sees them
    const bad = await h.pipeline.dispatch(request(h, s, [call("mcp__t__echo", { text: 5 })]));
    expect(bad.results[0]).toMatchObject({ isError: true });
    expect(text(bad.results[0])).toMatch(/text/);
  });

  it("readOnlyHint is believed only from a server the config marks trusted", async () => {
    const h = harness();
    expect(registry.get("mcp__plain__echo")!.approvalFor({})).toBe("required");
    const s = await session(h, ["mcp__plain__echo"]);
    const pending = h.pipeline.dispatch(
      request(h, s, [call("mcp__plain__echo", { text: "from an untrusted server" })]),
    );
    const card = await waitFor(() => approvalCards(h, s.session.id)[0], "approval card");
    await h.pipeline.answerApproval(s.actor, card.approvalId, "once");
    const out = (await pending).results[0];
    expect(out.content).toBe('<external_content source="mcp:plain">\nfrom an untrusted server\n</external_content>');
  });

  it("isError results fail the call; images, resources and structured content become text", async () => {
    const h = harness();
    const s = await session(h, ["mcp__t__fail", "mcp__web__rich"]);
    const out = await h.pipeline.dispatch(request(h, s, [call("mcp__t__fail", {}), call("mcp__web__rich", {})]));
    // an isError result is the server's text too: wrapped like any other
    expect(out.results[0]).toMatchObject({
      isError: true,
      content: '<external_content source="mcp:t">\nit broke: the widget is missing\n</external_content>',
    });
    expect(out.results[1].isError).toBe(false);
    // openWorldHint: the result is wrapped as external content
    expect(out.results[1].content).toMatch(
      /^<external_content[^>]*>\n\[image: image\/png, 16 bytes, not shown\]\n\nresource text\n\n\{\n {2}"answer": 42\n\}\n<\/external_content>$/,
    );
  });

  it("a cancelled call sends the server MCP's cancellation", async () => {
    const h = harness();
    const s = await session(h, ["mcp__web__sleep", "mcp__web__stats"]);
    // each poll in a turn of its own: the same call back to back in one turn is a doom loop
    const fresh = async () => ({ ...s, turn: await t.current.db.turn.create({ data: { sessionId: s.session.id } }) });
    const stats = async () =>
      JSON.parse(
        text(
          (
            await h.pipeline.dispatch(
              request(h, await fresh(), [call("mcp__web__stats", {}, `stats-${Math.random()}`)]),
            )
          ).results[0],
        ),
      ) as { cancelled: number; pid: number };
    const before = (await stats()).cancelled;
    const ctl = new AbortController();
    const p = h.pipeline.dispatch(request(h, s, [call("mcp__web__sleep", { ms: 20_000 })], { signal: ctl.signal }));
    await waitFor(
      async () =>
        (await t.current.db.toolCall.findFirst({
          where: { sessionId: s.session.id, name: "mcp__web__sleep", status: "running" },
        })) !== null,
      "sleep running",
    );
    ctl.abort();
    expect(text((await p).results[0])).toMatch(/Cancelled/);
    await waitFor(async () => (await stats()).cancelled === before + 1, "the server saw the cancellation");
  });

  it("a call past the server's timeout fails clearly and is cancelled on the server", async () => {
    const h = harness();
    const s = await session(h, ["mcp__short__sleep", "mcp__short__stats"]);
    const started = Date.now();
    const out = await h.pipeline.dispatch(request(h, s, [call("mcp__short__sleep", { ms: 10_000 })]));
    expect(Date.now() - started).toBeLessThan(5000);
    expect(out.results[0]).toMatchObject({ isError: true });
    expect(text(out.results[0])).toMatch(
      /^sleep on the MCP server short did not answer within 0\.7 s, so it was cancelled/,
    );
    const stats = await h.pipeline.dispatch(request(h, s, [call("mcp__short__stats", {})]));
    expect(JSON.parse(text(stats.results[0])).cancelled).toBeGreaterThanOrEqual(1);
  });

  it("a stdio server that exits mid-call fails that call and is restarted on the next", async () => {
    const h = harness();
    const s = await session(h, ["mcp__t__crash", "mcp__t__stats"]);
    const stats = async () =>
      JSON.parse(
        text(
          (await h.pipeline.dispatch(request(h, s, [call("mcp__t__stats", {}, `stats-${Math.random()}`)]))).results[0],
        ),
      ) as { pid: number };
    const first = (await stats()).pid;
    const crashed = await h.pipeline.dispatch(request(h, s, [call("mcp__t__crash", {})]));
    expect(crashed.results[0]).toMatchObject({ isError: true });
    expect(text(crashed.results[0])).toMatch(
      /^The MCP server t exited during the call to crash\. It is started again on the next call/,
    );
    expect(logs).toContain("mcp: the MCP server t exited; it is restarted on the next call");
    const second = (await stats()).pid;
    expect(second).not.toBe(first);
    expect(() => process.kill(first, 0)).toThrow();
  });

  it("an org rule on mcpServer denies that server's tools and no other's", async () => {
    const h = harness();
    const s = await session(h, ["mcp__web__echo", "mcp__t__echo"]);
    await t.current.db.orgPolicy.create({
      data: {
        orgId: s.org.id,
        version: 1,
        rules: [{ id: "no-web", effect: "deny", mcpServer: "web", reason: "not vetted" }],
      },
    });
    const out = await h.pipeline.dispatch(
      request(h, s, [call("mcp__web__echo", { text: "a" }), call("mcp__t__echo", { text: "b" })]),
    );
    expect(out.results[0]).toMatchObject({ isError: true });
    expect(text(out.results[0])).toMatch(/Denied by org policy v1, rule "no-web": not vetted/);
    expect([out.results[1].isError, text(out.results[1])]).toEqual([false, "b"]);
  });
});

describe("MCP servers that change", () => {
  it("a handful of MCP tools are loaded, after the built-ins", async () => {
    const own = new ToolRegistry([readTool]);
    const dir = mkdtempSync(join(tmpdir(), "quiver-mcp-few-"));
    writeFileSync(join(dir, "mcp.json"), JSON.stringify({ mcpServers: { few: stdioEntry() } }));
    const few = await startMcp({
      configPath: join(dir, "mcp.json"),
      registry: own,
      log: () => undefined,
      deferOver: 9,
    });
    try {
      expect(own.catalog().deferred).toEqual([]);
      expect(
        own
          .catalog()
          .loaded.map((t) => t.name)
          .slice(0, 3),
      ).toEqual(["read_file", "mcp__few__add_tool", "mcp__few__crash"]);
    } finally {
      await few.dispose();
    }
    expect(own.tools().map((t) => t.name)).toEqual(["read_file"]);
  });

  it("list_changed brings a new tool into the registry", async () => {
    const ctx = { signal: new AbortController().signal } as never;
    expect(registry.get("mcp__web__late")).toBeUndefined();
    await registry.get("mcp__web__add_tool")!.execute({}, ctx);
    const late = await waitFor(() => registry.get("mcp__web__late"), "mcp__web__late registered");
    expect(await late.execute({}, ctx)).toMatchObject({ output: "late ok" });
  });

  it("a server that keeps crashing is restarted only after a growing wait", async () => {
    const ctx = { signal: new AbortController().signal } as never;
    const run = (name: string) => registry.get(`mcp__t__${name}`)!.execute({}, ctx);
    await expect(run("crash")).rejects.toThrow(/exited during the call/);
    // restarted at once, and it crashes again: the next start waits (1 s by default)
    await expect(run("crash")).rejects.toThrow(/exited during the call/);
    await expect(run("stats")).rejects.toThrow(
      /^The MCP server t exited; it is restarted on a call after (0\.\d|1) s\. Try again later\./,
    );
    await new Promise((r) => setTimeout(r, 1100));
    expect(JSON.parse((await run("stats")).output)).toHaveProperty("pid");
  });

  it("an HTTP server that went away is reconnected on the next call; a forgotten session is renewed", async () => {
    const ctx = { signal: new AbortController().signal } as never;
    const echo = () => registry.get("mcp__web__echo")!.execute({ text: "again" }, ctx);
    await web.stop();
    await expect(echo()).rejects.toThrow(
      /^The connection to the MCP server web was lost during the call to echo: .*fetch failed/,
    );
    web = await startHttpServer(web.port);
    expect(await echo()).toMatchObject({ output: "again" });
    // a restart between two calls: the server answers 404 for the old session, which did not run
    // the call, so it is sent again on a new session
    await web.stop();
    web = await startHttpServer(web.port);
    expect(await echo()).toMatchObject({ output: "again" });
  });
});
