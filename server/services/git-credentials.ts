// A person's git credentials: one per host and scope (host, repository path prefix, user name,
// token), stored once and used for clone, fetch, pull and push. A remote gets the credential
// whose scope covers its path, the longest one first; a scope of "" is the whole host (every
// credential stored before scopes existed). The token is sealed with AES-256-GCM under a key of its own in the
// data folder (`git-credential-key`, made like the cookie key), with the row's user, host, user
// name and scope as additional data, so a sealed value copied to another row, person or scope does
// not open. After saving, only a masked hint (its last four characters) is ever shown; the token
// leaves this service only through `forRemote`, for one network operation the runner performs.
// Saving and deleting write an audit row (host, scope and user name, never the token).
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { join } from "node:path";
import { loadKeyFile } from "../auth/key-file";
import type { Db } from "../db";
import { GitCredentialInput, type RemoteUrl } from "../protocol/git-remote";
import { pathSegments, scopeCovers, scopeLabel } from "../protocol/git-scope";
import type { Actor } from "./types";

const KEY_FILE = "git-credential-key";

export class GitCredentialError extends Error {
  constructor(
    readonly code: "BAD_REQUEST" | "NOT_FOUND",
    message: string,
  ) {
    super(message);
    this.name = "GitCredentialError";
  }
}

/** What anyone ever sees of a stored credential. */
export interface GitCredentialView {
  id: string;
  host: string;
  /** The repository path prefix it is limited to; "" = every repository on the host. */
  scope: string;
  /** `github.com/myorg` or `github.com`: where it may be used, as the person reads it. */
  target: string;
  username: string;
  /** `••••` and the token's last four characters. */
  masked: string;
  createdAt: Date;
  lastUsedAt: Date | null;
}

export interface GitCredentialService {
  list(actor: Actor): Promise<GitCredentialView[]>;
  /**
   * Stores (or replaces) the caller's credential for `host`: a host, host:port, or a URL whose
   * path, when it has one, becomes the scope (`https://github.com/myorg/` or `github.com/myorg/app`).
   */
  save(actor: Actor, input: { host: string; username: string; token: string }): Promise<GitCredentialView>;
  remove(actor: Actor, id: string): Promise<void>;
  /** The credential `forRemote` would use for `remote` (nothing opened); null when none. */
  match(userId: string, remote: Pick<RemoteUrl, "host" | "url">): Promise<GitCredentialView | null>;
  /** The caller's credential for `remote`, opened, for one network operation; null when none. */
  forRemote(
    userId: string,
    remote: Pick<RemoteUrl, "host" | "url">,
  ): Promise<{ username: string; token: string; scope: string } | null>;
}

/** The data folder's credential key, created on first use (readable by this user only). */
export function loadCredentialKey(dataDir: string): Buffer {
  const file = join(dataDir, KEY_FILE);
  return loadKeyFile(
    file,
    (key) => key.length === 32,
    `${file} is damaged (expected 32 random bytes, base64url): delete it and store the git credentials again`,
  );
}

// A host-wide credential keeps the binding it had before scopes, so stored tokens still open.
const aad = (userId: string, host: string, username: string, scope: string) =>
  Buffer.from(JSON.stringify(["quiver-git-credential", userId, host, username, ...(scope ? [scope] : [])]), "utf8");

export function seal(key: Buffer, token: string, bound: Buffer): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv).setAAD(bound);
  const body = Buffer.concat([cipher.update(token, "utf8"), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64url");
}

export function unseal(key: Buffer, sealed: string, bound: Buffer): string {
  const raw = Buffer.from(sealed, "base64url");
  const decipher = createDecipheriv("aes-256-gcm", key, raw.subarray(0, 12)).setAAD(bound);
  decipher.setAuthTag(raw.subarray(12, 28));
  return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString("utf8");
}

/** `host` or `host:port` in lower case, from a host or a URL; undefined when it is neither. */
export function normaliseHost(text: string): string | undefined {
  const t = text.trim().toLowerCase();
  let host = t;
  if (/^[a-z][a-z0-9+.-]*:\/\//.test(t)) {
    try {
      host = new URL(t).host;
    } catch {
      return undefined;
    }
  }
  return /^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*(:\d{1,5})?$|^\[::1\](:\d{1,5})?$/.test(
    host,
  )
    ? host
    : undefined;
}

const PLAIN_PATH =
  "A repository path may have only letters, digits and . _ ~ + @ - between its slashes (no %-escapes, no . or .. parts, no //).";

/**
 * Host and scope from what a person typed: a host, host:port, or an http(s) URL or `host/path`
 * whose path is the scope; a reason when it is neither or the path is not plain.
 */
export function parseCredentialTarget(text: string): { host: string; scope: string } | { error: string } {
  const bad = {
    error: "Give the git server's host name (github.com, git.example.com:8443) or a repository URL on it.",
  };
  const t = text.trim();
  if (!t || /[\s\x00-\x1f\x7f\\]/.test(t)) return bad;
  // The URL parser would resolve these: refused so the scope shown is the text the person typed.
  if (/%|\/\.\.?(\/|$)/.test(t)) return { error: PLAIN_PATH };
  const hasScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(t);
  if (hasScheme && !/^https?:\/\//i.test(t)) return bad;
  let u: URL;
  try {
    u = new URL(hasScheme ? t : `https://${t}`);
  } catch {
    return bad;
  }
  const host = normaliseHost(u.host);
  if (!host || u.username || u.password || u.search || u.hash) return bad;
  const segments = pathSegments(u.pathname);
  if (!segments) return { error: PLAIN_PATH };
  return { host, scope: segments.join("/") };
}

const view = (row: {
  id: string;
  host: string;
  scope: string;
  username: string;
  hint: string;
  createdAt: Date;
  lastUsedAt: Date | null;
}): GitCredentialView => ({
  id: row.id,
  host: row.host,
  scope: row.scope,
  target: scopeLabel(row.host, row.scope),
  username: row.username,
  masked: `••••${row.hint}`,
  createdAt: row.createdAt,
  lastUsedAt: row.lastUsedAt,
});

export function createGitCredentialService(db: Db, key: Buffer): GitCredentialService {
  /** The person's credential whose scope covers the remote's path, the longest scope first. */
  async function pick(userId: string, remote: Pick<RemoteUrl, "host" | "url">) {
    const host = normaliseHost(remote.host);
    if (!host) return null;
    const rows = await db.gitCredential.findMany({ where: { userId, host } });
    const covering = rows.filter((r) => scopeCovers(r.scope, remote.url));
    const depth = (scope: string) => (scope ? scope.split("/").length : 0);
    return covering.sort((a, b) => depth(b.scope) - depth(a.scope))[0] ?? null;
  }

  return {
    async list(actor) {
      const rows = await db.gitCredential.findMany({ where: { userId: actor.userId }, orderBy: { host: "asc" } });
      return rows.map(view);
    },
    async save(actor, input) {
      const target = parseCredentialTarget(input.host);
      if ("error" in target) throw new GitCredentialError("BAD_REQUEST", target.error);
      const { host, scope } = target;
      const parsed = GitCredentialInput.safeParse({ username: input.username.trim(), token: input.token.trim() });
      if (!parsed.success) {
        const field = parsed.error.issues[0]?.path[0];
        throw new GitCredentialError(
          "BAD_REQUEST",
          field === "username"
            ? "The user name is empty or has spaces or a colon."
            : "The token is empty or has spaces or characters that are not printable ASCII.",
        );
      }
      const { username, token } = parsed.data;
      const data = {
        username,
        sealed: seal(key, token, aad(actor.userId, host, username, scope)),
        hint: token.slice(-4),
        lastUsedAt: null,
      };
      const [row] = await db.$transaction([
        db.gitCredential.upsert({
          where: { userId_host_scope: { userId: actor.userId, host, scope } },
          create: { userId: actor.userId, host, scope, ...data },
          update: data,
        }),
        db.auditEvent.create({
          data: {
            orgId: actor.orgId,
            actorId: actor.userId,
            action: "git.credential.saved",
            target: `git-host:${scopeLabel(host, scope)}`,
            detail: { host, scope, username },
          },
        }),
      ]);
      return view(row);
    },
    async remove(actor, id) {
      const row = await db.gitCredential.findFirst({ where: { id, userId: actor.userId } });
      if (!row) throw new GitCredentialError("NOT_FOUND", "No such credential (it may be deleted already).");
      await db.$transaction([
        db.gitCredential.delete({ where: { id: row.id } }),
        db.auditEvent.create({
          data: {
            orgId: actor.orgId,
            actorId: actor.userId,
            action: "git.credential.removed",
            target: `git-host:${scopeLabel(row.host, row.scope)}`,
            detail: { host: row.host, scope: row.scope, username: row.username },
          },
        }),
      ]);
    },
    async match(userId, remote) {
      const row = await pick(userId, remote);
      return row && view(row);
    },
    async forRemote(userId, remote) {
      const row = await pick(userId, remote);
      if (!row) return null;
      let token: string;
      try {
        token = unseal(key, row.sealed, aad(userId, row.host, row.username, row.scope));
      } catch {
        throw new GitCredentialError(
          "BAD_REQUEST",
          `The stored credential for ${scopeLabel(row.host, row.scope)} cannot be opened (the data folder's git-credential-key changed): store it again under Settings → Git.`,
        );
      }
      await db.gitCredential.update({ where: { id: row.id }, data: { lastUsedAt: new Date() } }).catch(() => undefined);
      return { username: row.username, token, scope: row.scope };
    },
  };
}
