// The git services of one server, made on first use from what every server already has (its
// database, data folder and runner pool) and kept per runner pool, so the router, the agent's
// git_push and a project's clone share them without more wiring in app.ts.
import type { Db } from "../db";
import type { Executor } from "../executors/contract";
import type { GitToolService } from "../tools/tool";
import { createGitCredentialService, loadCredentialKey, type GitCredentialService } from "./git-credentials";
import { createGitRemoteService, type GitRemoteService } from "./git-remote";

export interface GitServices {
  credentials: GitCredentialService;
  remote: GitRemoteService;
}

const made = new WeakMap<object, GitServices>();

export function gitServicesOf(deps: { db: Db; env: { dataDir: string }; runners: Pick<Executor, "run"> }): GitServices {
  let s = made.get(deps.runners);
  if (!s) {
    const credentials = createGitCredentialService(deps.db, loadCredentialKey(deps.env.dataDir));
    s = { credentials, remote: createGitRemoteService({ db: deps.db, runner: deps.runners, credentials }) };
    made.set(deps.runners, s);
  }
  return s;
}

/** What git_push gets for one session: its remote, and a push with the session owner's credential. */
export function gitToolService(git: GitServices, db: Db, sessionId: string): GitToolService {
  return {
    async remote() {
      const r = await git.remote.remoteOf(sessionId);
      return "error" in r ? r : { url: r.url, host: r.host, ...(r.note ? { note: r.note } : {}) };
    },
    async push(url, opts) {
      const session = await db.session.findUnique({ where: { id: sessionId }, select: { ownerId: true } });
      if (!session) throw new Error(`No session ${sessionId}.`);
      const r = await git.remote.run(session.ownerId, sessionId, "push", { ...opts, expectUrl: url });
      return { message: r.message };
    },
  };
}
