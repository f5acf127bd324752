import { describe, expect, it } from "vitest";
import { z } from "zod";
import { resolveCall } from "./resolve";
import { ToolRegistry, UNAVAILABLE } from "./registry";
import { SessionToolState } from "./session";
import { defineTool } from "./tool";
import { fakeTool } from "../testing/tools";

const edit = defineTool({
  name: "edit_file",
  description: "Edits a file.",
  input: z.object({
    path: z.string(),
    old_str: z.string(),
    new_str: z.string(),
    replace_all: z.boolean().default(false),
  }),
  capabilities: ["WritesFiles"],
  executor: "runner",
  execute: async () => ({ output: "ok" }),
});

function session(preset: "coding" | "readonly" = "coding") {
  const r = new ToolRegistry([
    edit,
    fakeTool("read_file"),
    fakeTool("deploy_app", { deferLoading: true }),
    fakeTool("bad name"),
  ]);
  return new SessionToolState(r, preset);
}

const call = (name: string, args: unknown) => ({
  name,
  rawArguments: typeof args === "string" ? args : JSON.stringify(args),
});

describe("resolveCall", () => {
  it("passes a clean call through unrepaired, with schema defaults", () => {
    const r = resolveCall(session(), call("edit_file", { path: "a", old_str: "x", new_str: "y" }), { strict: false });
    expect(r).toEqual({
      ok: true,
      tool: edit,
      input: { path: "a", old_str: "x", new_str: "y", replace_all: false },
      repaired: false,
      notes: [],
      nameRung: "exact",
      argumentRungs: [],
    });
  });

  it.each([
    [
      "editFile",
      '{"path":"a","old_str":"x","new_str":"y"}',
      ['tool name "editFile" resolved to "edit_file" (snake_case)'],
    ],
    [
      "edit_file",
      '{"path":"a","old_str":"x\ny","new_str":"y",}',
      ["arguments repaired: control_chars, trailing_commas"],
    ],
    [
      "EDIT-FILE",
      '{"path":"a","old_str":"x","new_str":"y","replace_all":tr',
      ['tool name "EDIT-FILE" resolved to "edit_file" (hyphen_to_underscore)', "arguments repaired: closed_brackets"],
    ],
  ])("repairs %s %j", (name, raw, notes) => {
    const r = resolveCall(session(), { name, rawArguments: raw }, { strict: false });
    expect(r).toMatchObject({ ok: true, repaired: true, notes });
  });

  it("a cut-off call whose required fields were lost is reported by validation", () => {
    const r = resolveCall(session(), call("edit_file", '{"path":"a","old_str":"x","new_'), { strict: false });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.message).toContain("- new_str: missing required field (expected string)");
  });

  it("unparseable arguments become {} and validation lists the missing fields", () => {
    const r = resolveCall(session(), call("edit_file", "path=a old=x"), { strict: false });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.kind).toBe("respond");
    expect(r.error.message).toMatch(/^The arguments were not usable JSON .*treated as \{\}\./);
    for (const f of ["path", "old_str", "new_str"]) expect(r.error.message).toContain(`- ${f}: missing required field`);
  });

  it.each([
    '{"path":"a","old_str":"x","new_str":"y",}',
    '{"path":"a","old_str":"x","new_str":"y',
    '{"path":"a","old_str":"x\ny","new_str":"y"}',
  ])("strict mode refuses damaged arguments and asks for a resend: %j", (raw) => {
    const r = resolveCall(session(), { name: "edit_file", rawArguments: raw }, { strict: true });
    expect(r).toMatchObject({ ok: false, name: "edit_file" });
    if (!r.ok) {
      expect(r.error.message).toContain("hit the output limit");
      expect(r.error.message).toContain("Resend the call with complete arguments");
    }
  });

  it("strict mode still accepts valid JSON", () => {
    expect(
      resolveCall(session(), call("edit_file", { path: "a", old_str: "x", new_str: "y" }), { strict: true }).ok,
    ).toBe(true);
  });

  it("unknown names get did-you-mean candidates", () => {
    const r = resolveCall(session(), call("edt_fil", {}), { strict: false });
    expect(r).toMatchObject({ ok: false, name: "edt_fil" });
    if (!r.ok) expect(r.error.message).toBe('Unknown tool "edt_fil". Did you mean: edit_file?');
  });

  it("with no near name, lists the tools that can be called", () => {
    const r = resolveCall(session(), call("kubectl", {}), { strict: false });
    if (!r.ok)
      expect(r.error.message).toBe(
        'Unknown tool "kubectl". Available tools: bad_name, edit_file, read_file, tool_search.',
      );
    expect(r.ok).toBe(false);
  });

  it("a deferred tool whose schema was never sent says how to load it", () => {
    const s = session();
    const r = resolveCall(s, call("deploy_app", { path: "x" }), { strict: false });
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error.message).toContain("deploy_app is a deferred tool and its schema has not been loaded");
      expect(r.error.message).toContain('Call tool_search with query "select:deploy_app"');
    }
    s.activate(["deploy_app"]);
    expect(resolveCall(s, call("deploy_app", { path: "x" }), { strict: false }).ok).toBe(true);
  });

  it("a fail-closed stand-in answers unavailable", () => {
    const r = resolveCall(session(), call("bad_name", {}), { strict: false });
    expect(r).toMatchObject({ ok: false, name: "bad_name" });
    if (!r.ok) expect(r.error.message).toBe(UNAVAILABLE);
  });

  it("a known field mix-up asks for a retry with the mapping", () => {
    const r = resolveCall(session(), call("edit_file", { file_path: "a", old_string: "x", new_string: "y" }), {
      strict: false,
    });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.meta).toMatchObject({
      retry_required: true,
      field_mapping: { file_path: "path", old_string: "old_str", new_string: "new_str" },
    });
    expect(r.error.message).toContain('"retry_required":true');
  });

  it("a tool outside the session's surface is refused by name", () => {
    const r = resolveCall(session("readonly"), call("edit_file", {}), { strict: false });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.message).toContain("not available on this session's readonly tool surface");
  });

  it("oversized arguments are refused with advice", () => {
    const r = resolveCall(session(), call("edit_file", { path: "a", old_str: "x", new_str: "y".repeat(1024 * 1024) }), {
      strict: false,
    });
    expect(r.ok).toBe(false);
    if (!r.ok)
      expect(r.error.message).toMatch(/above the 1048576-byte limit\. Split the work into smaller edit_file calls\./);
  });
});
