// git_push: the agent's push, run by the server, never by the agent's shell. The model names the
// remote URL so the approval card and the org policy (tool, Network capability, `host`) see where
// the code goes; the server checks it is the session's remote, at the check and again at the
// push, and the push runs with the session owner's stored credential, which stays on the server
// and the runner (services/git-remote.ts). Nothing of the credential is in the call's input,
// output or events.
import { readFileSync } from "node:fs";
import { z } from "zod";
import { parseRemoteUrl } from "../../protocol/git-remote";
import { respond } from "../errors";
import { defineTool } from "../tool";

const GitPushInput = z
  .object({ url: z.string().min(1).max(2000).describe("The workspace's remote URL (git remote get-url origin).") })
  .strict();

const normalise = (url: string) => {
  const r = parseRemoteUrl(url);
  return "error" in r ? url.trim() : r.url;
};

export const gitPushTool = defineTool({
  name: "git_push",
  description: readFileSync(new URL("./git_push.txt", import.meta.url), "utf8").trim(),
  input: GitPushInput,
  capabilities: ["Network", "WritesFiles"],
  executor: "server",
  fieldAliases: { remote: "url", remote_url: "url" },
  // Code leaves the machine: a person says yes unless the policy allows it.
  approvalFor: () => "required",
  isReadOnly: () => false,
  isConcurrencySafe: () => false,
  isDestructive: () => false,
  isOpenWorld: () => true,
  summarize: (i) => `Push to ${i.url}`,
  // The card names the whole URL (no user or token: parseRemoteUrl refuses them), and says when it
  // is not where this workspace last pushed: origin is the agent's to rewrite.
  async preview(input, ctx) {
    const remote = await ctx.services.git?.remote();
    return remote && !("error" in remote) && remote.note ? { note: remote.note } : undefined;
  },
  async validateInput(input, ctx) {
    const git = ctx.services.git;
    if (!git) return "git_push is not available here.";
    const parsed = parseRemoteUrl(input.url);
    if ("error" in parsed) return parsed.error;
    const remote = await git.remote();
    if ("error" in remote) return remote.error;
    if (remote.url !== parsed.url)
      return `git_push pushes only to this workspace's remote, ${remote.url}: call it with that url.`;
    return undefined;
  },
  async execute(input, ctx) {
    const git = ctx.services.git;
    if (!git) throw respond("git_push is not available here.");
    try {
      const r = await git.push(normalise(input.url), { signal: ctx.signal, onProgress: ctx.progress });
      return { output: r.message };
    } catch (err) {
      throw respond((err as Error).message);
    }
  },
});
