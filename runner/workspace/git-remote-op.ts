// ide_git_remote: the Changes panel's Fetch, Pull and Push, the agent's git_push (through the
// server, which adds the person's stored credential), a clone into an empty workspace, and the
// offline status the panel shows. One operation at a time per workspace; every answer carries the
// status (meta) so the panel stays current. Nothing of the credential is ever in a result.
import {
  GIT_REMOTE_OP,
  GitRemoteInput,
  parseRemoteUrl,
  type GitRemoteStatus,
  type RemoteUrl,
} from "../../server/protocol/git-remote";
import { defineOp, type OpResult, type OpTable } from "../ops";
import { git, type GitHost } from "./git";
import { GitRemoteError, cloneRemote, fetchRemote, pullRemote, pushRemote } from "./git-remote-sync";

/** What the panel shows without reaching the network. */
export async function remoteStatus(host: GitHost): Promise<GitRemoteStatus> {
  const none: GitRemoteStatus = { origin: null, branch: null, ahead: null, behind: null };
  if ((await git(host, ["rev-parse", "--is-inside-work-tree"])).code !== 0) return none;
  const origin = (await git(host, ["config", "--get", "remote.origin.url"])).stdout.trim() || null;
  const branch = (await git(host, ["symbolic-ref", "-q", "--short", "HEAD"])).stdout.trim() || null;
  if (!branch) return { ...none, origin };
  const counts = await git(host, ["rev-list", "--left-right", "--count", `HEAD...refs/remotes/origin/${branch}`, "--"]);
  const m = /^(\d+)\s+(\d+)/.exec(counts.stdout.trim());
  return {
    origin,
    branch,
    ahead: m && counts.code === 0 ? Number(m[1]) : null,
    behind: m && counts.code === 0 ? Number(m[2]) : null,
  };
}

// One network operation per workspace at a time: two pushes racing on one private repository
// and ref update would each see the other's half-done state.
const busy = new Map<string, Promise<unknown>>();
function serial<T>(root: string, work: () => Promise<T>): Promise<T> {
  const prev = busy.get(root) ?? Promise.resolve();
  const next = prev.then(work, work);
  busy.set(
    root,
    next.catch(() => undefined),
  );
  return next;
}

export const gitRemoteOp = defineOp({
  input: GitRemoteInput,
  async run(input, ctx): Promise<OpResult> {
    const host = ctx.workspace;
    if (input.action === "status") return { ok: true, output: "", meta: await remoteStatus(host) };
    const parsed = parseRemoteUrl(input.url);
    if ("error" in parsed) return { ok: false, output: parsed.error, meta: await remoteStatus(host) };
    const remote: RemoteUrl = parsed;
    const opts = {
      remote,
      credential: input.credential,
      signal: ctx.signal,
      onProgress: (line: string) => {
        // Percentages are many lines a second: only each phase's last line goes on.
        if (!/\d+% \(/.test(line) || /done\.?$/.test(line)) ctx.progress(`${line}\n`);
      },
    };
    try {
      const output = await serial(host.root, async () => {
        switch (input.action) {
          case "clone": {
            const r = await cloneRemote(host, { ...opts, branch: input.branch, making: input.making });
            return r.commit
              ? `cloned ${remote.url} (${r.branch} at ${r.commit.slice(0, 10)})`
              : `cloned ${remote.url}: it is empty (branch ${r.branch})`;
          }
          case "fetch": {
            const r = await fetchRemote(host, opts);
            return r.updated
              ? `fetched ${remote.url}: ${r.updated} ref(s) updated`
              : `fetched ${remote.url}: already up to date`;
          }
          case "pull": {
            const r = await pullRemote(host, opts);
            if (r.from === r.to) return `${r.branch} is up to date with origin/${r.branch}`;
            return `pulled origin/${r.branch}: ${r.from ? r.from.slice(0, 10) : "(nothing)"}..${r.to.slice(0, 10)}`;
          }
          case "push": {
            const r = await pushRemote(host, opts);
            return `pushed ${r.branch} (${r.commit.slice(0, 10)}) to ${remote.url}`;
          }
        }
      });
      return { ok: true, output, meta: await remoteStatus(host) };
    } catch (err) {
      const message =
        err instanceof GitRemoteError ? err.message : `git ${input.action} failed: ${(err as Error).message}`;
      const token = input.credential?.token;
      return {
        ok: false,
        output: token ? message.split(token).join("***") : message,
        meta: await remoteStatus(host).catch(() => undefined),
      };
    }
  },
});

export const gitRemoteOps: OpTable = { [GIT_REMOTE_OP]: gitRemoteOp };
