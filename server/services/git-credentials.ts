// A person's git credentials: one per host (host + user name + token), stored once and used for
// clone, fetch, pull and push. The token is sealed with AES-256-GCM under a key of its own in the
// data folder (`git-credential-key`, made like the cookie key), with the row's user, host and user
// name as additional data, so a sealed value copied to another row or person does not open. After
// saving, only a masked hint (its last four characters) is ever shown; the token leaves this
// service only through `forHost`, for one network operation the runner performs. Saving and
// deleting write an audit row (host and user name, never the token).
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Db } from "../db";
import { GitCredentialInput } from "../protocol/git-remote";
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
  username: string;
  /** `••••` and the token's last four characters. */
  masked: string;
  createdAt: Date;
  lastUsedAt: Date | null;
}

export interface GitCredentialService {
  list(actor: Actor): Promise<GitCredentialView[]>;
  /** Stores (or replaces) the caller's credential for `host` (a host, host:port, or a URL of it). */
  save(actor: Actor, input: { host: string; username: string; token: string }): Promise<GitCredentialView>;
  remove(actor: Actor, id: string): Promise<void>;
  /** Whether `userId` has a credential for `host` (nothing opened). */
  has(userId: string, host: string): Promise<boolean>;
  /** The caller's credential for `host`, opened, for one network operation; null when none. */
  forHost(userId: string, host: string): Promise<{ username: string; token: string } | null>;
}

/** The data folder's credential key, created on first use (readable by this user only). */
export function loadCredentialKey(dataDir: string): Buffer {
  const file = join(dataDir, KEY_FILE);
  if (existsSync(file)) {
    const key = Buffer.from(readFileSync(file, "utf8").trim(), "base64url");
    if (key.length === 32) return key;
    throw new Error(
      `${file} is damaged (expected 32 random bytes, base64url): delete it and store the git credentials again`,
    );
  }
  const key = randomBytes(32);
  // "wx": never overwrite a key another process wrote in the meantime.
  writeFileSync(file, key.toString("base64url") + "\n", { mode: 0o600, flag: "wx" });
  chmodSync(file, 0o600);
  return loadCredentialKey(dataDir);
}

const aad = (userId: string, host: string, username: string) =>
  Buffer.from(JSON.stringify(["quiver-git-credential", userId, host, username]), "utf8");

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

const view = (row: {
  id: string;
  host: string;
  username: string;
  hint: string;
  createdAt: Date;
  lastUsedAt: Date | null;
}): GitCredentialView => ({
  id: row.id,
  host: row.host,
  username: row.username,
  masked: `••••${row.hint}`,
  createdAt: row.createdAt,
  lastUsedAt: row.lastUsedAt,
});

export function createGitCredentialService(db: Db, key: Buffer): GitCredentialService {
  return {
    async list(actor) {
      const rows = await db.gitCredential.findMany({ where: { userId: actor.userId }, orderBy: { host: "asc" } });
      return rows.map(view);
    },
    async save(actor, input) {
      const host = normaliseHost(input.host);
      if (!host)
        throw new GitCredentialError(
          "BAD_REQUEST",
          "Give the git server's host name (github.com, git.example.com:8443) or a repository URL on it.",
        );
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
        sealed: seal(key, token, aad(actor.userId, host, username)),
        hint: token.slice(-4),
        lastUsedAt: null,
      };
      const [row] = await db.$transaction([
        db.gitCredential.upsert({
          where: { userId_host: { userId: actor.userId, host } },
          create: { userId: actor.userId, host, ...data },
          update: data,
        }),
        db.auditEvent.create({
          data: {
            orgId: actor.orgId,
            actorId: actor.userId,
            action: "git.credential.saved",
            target: `git-host:${host}`,
            detail: { host, username },
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
            target: `git-host:${row.host}`,
            detail: { host: row.host, username: row.username },
          },
        }),
      ]);
    },
    async has(userId, host) {
      const h = normaliseHost(host);
      return !!h && (await db.gitCredential.count({ where: { userId, host: h } })) > 0;
    },
    async forHost(userId, rawHost) {
      const host = normaliseHost(rawHost);
      if (!host) return null;
      const row = await db.gitCredential.findUnique({ where: { userId_host: { userId, host } } });
      if (!row) return null;
      let token: string;
      try {
        token = unseal(key, row.sealed, aad(userId, host, row.username));
      } catch {
        throw new GitCredentialError(
          "BAD_REQUEST",
          `The stored credential for ${host} cannot be opened (the data folder's git-credential-key changed): store it again under Settings → Git.`,
        );
      }
      await db.gitCredential.update({ where: { id: row.id }, data: { lastUsedAt: new Date() } }).catch(() => undefined);
      return { username: row.username, token };
    },
  };
}
