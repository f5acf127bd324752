// git_diff: the session's (or the whole workspace's) uncommitted changes as a unified diff.
import { FILE_LIMITS, GitDiffInput } from "../../server/protocol/file-ops";
import { countPatch } from "../workspace/diff";
import { patchSections } from "../workspace/git-quote";
import { defineOp } from "../ops";

function stat(text: string): string {
  const sections = patchSections(text);
  const rows = sections.map((s) => {
    const name = /^diff --git a\/(.*?) b\//.exec(s)?.[1] ?? "?";
    let add = 0;
    let del = 0;
    for (const l of s.split("\n")) {
      if (l.startsWith("+") && !l.startsWith("+++ ")) add++;
      else if (l.startsWith("-") && !l.startsWith("--- ")) del++;
    }
    return `${name} | +${add} -${del}`;
  });
  const total = countPatch(text);
  return [...rows, `${total.files} file(s) changed, ${total.lines} line(s)`].join("\n");
}

export const gitDiffOp = defineOp({
  input: GitDiffInput,
  async run(input, ctx) {
    const scope = input.scope ?? "session";
    let paths: string[] | undefined = scope === "session" ? ctx.workspace.writtenBy(ctx.sessionId) : undefined;
    if (input.path) {
      const target = await ctx.workspace.resolve(input.path, "read");
      if (target.rel) {
        paths = paths ? paths.filter((p) => p === target.rel || p.startsWith(`${target.rel}/`)) : [target.rel];
      }
    }
    if (paths && paths.length === 0) {
      const none = scope === "session" ? "This session has not changed any files" : "No changes";
      return {
        ok: true,
        output: `${none}${input.path ? ` under ${input.path}` : ""}. (scope "workspace" shows every uncommitted change.)`,
        meta: { files: 0 },
      };
    }
    const { text, overflow, mode } = await ctx.workspace.diff.text(paths, FILE_LIMITS.diffMaxBytes * 2);
    if (!text.trim()) return { ok: true, output: "No uncommitted changes.", meta: { files: 0, mode } };
    const size = countPatch(text);
    if (input.stat) return { ok: true, output: stat(text), meta: { ...size, mode } };
    let out = text;
    let truncated = overflow;
    if (Buffer.byteLength(out) > FILE_LIMITS.diffMaxBytes) {
      out = Buffer.from(out)
        .subarray(0, FILE_LIMITS.diffMaxBytes)
        .toString("utf8")
        .replace(/\uFFFD$/, "");
      truncated = true;
    }
    if (truncated)
      out += `\n[diff cut at ${FILE_LIMITS.diffMaxBytes} bytes; use stat: true for the summary or path for one file]`;
    return { ok: true, output: out, meta: { ...size, mode, truncated } };
  },
});
