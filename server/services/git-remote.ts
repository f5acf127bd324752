// Fetch, pull, push and clone for a session's workspace, with the person's stored credential.
// Which remote: the session's project's git URL when it has one (the server's record, which the
// agent cannot change), else the workspace's `origin` as its configuration says — shown to the
// person before a push, and in the agent's approval card and the policy's `host`. A remote from
// `origin` is compared with the one this workspace last pushed to or cloned from Quiver (kept on
// the workspace's row, where the agent cannot write), and a difference is said on the card and in
// the Changes panel: an agent that rewrites origin cannot make the person's push go elsewhere
// unseen. Fetch and pull do not count, so fetching from a rewritten origin does not hide it.
// Whose credential: the person acting, or for the agent's git_push the session's owner; the one
// stored for the URL's exact host whose scope covers its path (git-credentials.ts), so a remote
// rewritten to another host, or outside a scoped credential's path, gets no token. The token goes
// to the runner inside one `ide_git_remote` request and nowhere else: not in an event, a tool
// call's input or output, an audit row or a log line (outputs are scrubbed of it all the same).
import { randomUUID } from "node:crypto";
import type { Db } from "../db";
import type { Executor } from "../executors/contract";
import {
  GIT_REMOTE_OP,
  GitRemoteStatus,
  parseRemoteUrl,
  type GitRemoteInput,
  type RemoteUrl,
} from "../protocol/git-remote";
import type { GitCredentialService } from "./git-credentials";

export type GitAction = "fetch" | "pull" | "push";

export class GitRemoteError extends Error {
  constructor(
    readonly code: "BAD_REQUEST" | "CONFLICT" | "PRECONDITION_FAILED",
    message: string,
    readonly status?: GitRemoteStatus,
  ) {
    super(message);
    this.name = "GitRemoteError";
  }
}

export interface GitRemoteView extends GitRemoteStatus {
  /** The URL fetch, pull and push use (null: none, or not one Quiver reaches). */
  remote: string | null;
  /** Why `remote` is null although the workspace names one. */
  remoteProblem?: string;
  /** The remote's host, and whether the asking person has a credential stored for it. */
  host: string | null;
  hasCredential: boolean;
  /** Where the credential that would be used may be used (`github.com/myorg`), when there is one. */
  credentialTarget?: string;
  /** Said before a push: the remote is not the one this workspace last pushed to (remoteNote). */
  remoteNote?: string;
}

export interface GitRunOptions {
  signal?: AbortSignal;
  /** The URL the caller was shown (an approval card): refused if the remote is another now. */
  expectUrl?: string;
  onProgress?(chunk: string): void;
}

export interface GitRemoteService {
  status(userId: string, sessionId: string): Promise<GitRemoteView>;
  /** `userId`: whose credential is used (the person, or the session's owner for the agent). */
  run(
    userId: string,
    sessionId: string,
    action: GitAction,
    opts?: GitRunOptions,
  ): Promise<{ message: string; status: GitRemoteStatus }>;
  /** Into the session's workspace, which must be empty. */
  clone(
    userId: string,
    sessionId: string,
    url: string,
    branch?: string,
  ): Promise<{ message: string; status: GitRemoteStatus }>;
  /** The runner input of a clone with the person's credential (for a new workspace; services/projects). */
  cloneInput(userId: string, url: string, branch?: string): Promise<GitRemoteInput>;
  /** The session's remote as the agent's git_push shows it (approval card, policy host). */
  remoteOf(sessionId: string): Promise<(RemoteUrl & { note?: string }) | { error: string }>;
}

const NETWORK_MS = 5 * 60_000;
const DONE: Record<GitAction, string> = { fetch: "fetched", pull: "pulled", push: "pushed" };

export function createGitRemoteService(deps: {
  db: Db;
  runner: Pick<Executor, "run">;
  credentials: GitCredentialService;
}): GitRemoteService {
  const { db, runner, credentials } = deps;

  async function call(sessionId: string, input: GitRemoteInput, opts: GitRunOptions = {}, token?: string) {
    const ms = input.action === "status" ? 30_000 : NETWORK_MS;
    const signal = opts.signal ? AbortSignal.any([opts.signal, AbortSignal.timeout(ms)]) : AbortSignal.timeout(ms);
    try {
      const r = await runner.run({
        sessionId,
        callId: `git_${randomUUID()}`,
        op: GIT_REMOTE_OP,
        input,
        deadline: Date.now() + ms,
        signal,
        onProgress: opts.onProgress,
      });
      const scrub = (t: string) => (token ? t.split(token).join("***") : t);
      return { ok: r.ok, output: scrub(r.output), status: GitRemoteStatus.safeParse(r.meta).data };
    } catch (err) {
      throw new GitRemoteError("PRECONDITION_FAILED", (err as Error).message);
    }
  }

  async function sessionGit(sessionId: string) {
    const s = await db.session.findUnique({
      where: { id: sessionId },
      select: {
        workspaceId: true,
        project: { select: { sourceKind: true, gitUrl: true } },
        workspaceRef: { select: { gitRemote: true } },
      },
    });
    return {
      projectUrl: s?.project?.sourceKind === "git" && s.project.gitUrl ? s.project.gitUrl : null,
      workspaceId: s?.workspaceId ?? null,
      lastRemote: s?.workspaceRef?.gitRemote ?? null,
    };
  }

  async function remoteFor(
    sessionId: string,
    origin: string | null,
  ): Promise<(RemoteUrl & { note?: string }) | { error: string }> {
    const git = await sessionGit(sessionId);
    const url = git.projectUrl ?? origin;
    if (!url)
      return {
        error:
          "This workspace has no remote: its project was not made from a git URL and its repository has no origin.",
      };
    const remote = parseRemoteUrl(url);
    if ("error" in remote || git.projectUrl) return remote;
    const note = remoteNote(remote.url, git.workspaceId ? git.lastRemote : null);
    return note ? { ...remote, note } : remote;
  }

  /** The workspace's remote from now on is `url`: the person pushed to it or cloned it. */
  async function remember(sessionId: string, url: string) {
    const { workspaceId } = await sessionGit(sessionId);
    if (workspaceId)
      await db.workspace.update({ where: { id: workspaceId }, data: { gitRemote: url } }).catch(() => undefined);
  }

  async function withCredential(userId: string, remote: RemoteUrl) {
    const c = await credentials.forRemote(userId, remote);
    return c ? { username: c.username, token: c.token, ...(c.scope ? { scope: c.scope } : {}) } : undefined;
  }

  async function offline(sessionId: string): Promise<GitRemoteStatus> {
    const r = await call(sessionId, { action: "status" });
    if (!r.ok || !r.status)
      throw new GitRemoteError("PRECONDITION_FAILED", r.output || "The runner did not say the repository's state.");
    return r.status;
  }

  async function finish(r: Awaited<ReturnType<typeof call>>, sessionId: string) {
    if (!r.ok) throw new GitRemoteError("CONFLICT", r.output, r.status);
    return { message: r.output, status: r.status ?? (await offline(sessionId)) };
  }

  return {
    async status(userId, sessionId) {
      const st = await offline(sessionId);
      const remote = await remoteFor(sessionId, st.origin);
      if ("error" in remote)
        return {
          ...st,
          remote: null,
          remoteProblem: st.origin ? remote.error : undefined,
          host: null,
          hasCredential: false,
        };
      const credential = await credentials.match(userId, remote);
      return {
        ...st,
        remote: remote.url,
        host: remote.host,
        hasCredential: !!credential,
        ...(credential ? { credentialTarget: credential.target } : {}),
        ...(remote.note ? { remoteNote: remote.note } : {}),
      };
    },
    async run(userId, sessionId, action, opts) {
      const st = await offline(sessionId);
      const remote = await remoteFor(sessionId, st.origin);
      if ("error" in remote) throw new GitRemoteError("BAD_REQUEST", remote.error, st);
      if (opts?.expectUrl !== undefined && opts.expectUrl !== remote.url)
        throw new GitRemoteError(
          "CONFLICT",
          `The workspace's remote is ${remote.url} now, not ${opts.expectUrl}: nothing was ${DONE[action]}.`,
          st,
        );
      const credential = await withCredential(userId, remote);
      const done = await finish(
        await call(
          sessionId,
          { action, url: remote.url, ...(credential ? { credential } : {}) },
          opts,
          credential?.token,
        ),
        sessionId,
      );
      if (action === "push") await remember(sessionId, remote.url);
      return done;
    },
    async clone(userId, sessionId, url, branch) {
      const input = await this.cloneInput(userId, url, branch);
      const done = await finish(
        await call(sessionId, input, {}, "credential" in input ? input.credential?.token : undefined),
        sessionId,
      );
      if (input.action === "clone") await remember(sessionId, input.url);
      return done;
    },
    async cloneInput(userId, url, branch) {
      const remote = parseRemoteUrl(url);
      if ("error" in remote) throw new GitRemoteError("BAD_REQUEST", remote.error);
      const credential = await withCredential(userId, remote);
      return { action: "clone", url: remote.url, ...(branch ? { branch } : {}), ...(credential ? { credential } : {}) };
    },
    async remoteOf(sessionId) {
      const st = await offline(sessionId).catch(() => null);
      return remoteFor(sessionId, st?.origin ?? null);
    },
  };
}

/**
 * What a person should know before pushing to `url` from origin: that it is not where this
 * workspace last pushed to or cloned from (`last`), or that nothing was pushed from Quiver yet.
 */
export function remoteNote(url: string, last: string | null): string | undefined {
  if (last === url) return undefined;
  if (last) return `origin changed since your last push: was ${last}, is ${url} now (the agent can change origin).`;
  return `Nothing was pushed to ${url} from Quiver in this workspace yet: it is what the workspace's origin says, which the agent can change.`;
}
