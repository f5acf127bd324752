// Tests with people in them. `useAccountsServer`: a whole server with accounts on (no web app)
// on a fresh test database, its people signed in (auth/authorize-testing.ts), for one describe
// block. `signInAs`: a person signed in without a password, by a better-auth session row made by
// better-auth's own adapter and the cookie a browser would hold for it (the token with its HMAC,
// as better-auth signs it); revoking it is what the devices page does (accounts.revokeDevice).
import { createHmac } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import type { Accounts } from "../auth/accounts/index";
import { startQuiver, type Quiver } from "../app";
import { signInPeople, type People } from "../auth/authorize-testing";
import type { DbProvider } from "../db";
import { createTestDb, type TestDb } from "./db";
import { testServerEnv } from "./env";

const root = join(import.meta.dirname, "..", "..");

export interface AccountsServerOptions {
  /** Names the data folder (quiver-<name>-…). */
  name: string;
  /** More of the server's environment, read when it starts (after earlier beforeAll hooks). */
  env?: () => Record<string, string>;
  /** Anyone may sign up (QUIVER_SIGNUP=open) and the fixture's people are signed in (default). */
  people?: boolean;
  log?: (line: string) => void;
  /** How long starting may take (default 90 s). */
  startMs?: number;
}

export interface AccountsServer {
  readonly quiver: Quiver;
  readonly db: TestDb;
  /** The signed-in people and their fixture (not with `people: false`). */
  readonly people: People;
}

/** Vitest helper: the server of the enclosing describe block, stopped and its database dropped after it. */
export function useAccountsServer(provider: DbProvider, options: AccountsServerOptions): AccountsServer {
  const withPeople = options.people ?? true;
  let db: (TestDb & { dispose(): Promise<void> }) | undefined;
  let dataDir: string | undefined;
  let quiver: Quiver | undefined;
  let people: People | undefined;
  beforeAll(async () => {
    db = await createTestDb(provider);
    dataDir = mkdtempSync(join(tmpdir(), `quiver-${options.name}-`));
    const env = testServerEnv(dataDir, {
      DATABASE_URL: db.url,
      QUIVER_AUTH: "accounts",
      ...(withPeople ? { QUIVER_SIGNUP: "open" } : {}),
      ...options.env?.(),
    });
    quiver = await startQuiver({ env, root, web: false, log: options.log ?? (() => {}) });
    if (withPeople) people = await signInPeople(quiver.url, db.db);
  }, options.startMs ?? 90_000);
  afterAll(async () => {
    await quiver?.stop();
    await db?.dispose();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });
  const ready = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`${what} not ready (use inside tests)`);
    return value;
  };
  return {
    get quiver() {
      return ready(quiver, "server");
    },
    get db() {
      return ready(db, "test database");
    },
    get people() {
      return ready(people, withPeople ? "people" : "people (started with people: false)");
    },
  };
}

export interface TestSignIn {
  /** The Cookie header value. */
  cookie: string;
  authSessionId: string;
  /** Signs this device out as the devices page does (row deleted, sockets ended). */
  revoke(): Promise<void>;
}

export async function signInAs(
  accounts: Pick<Accounts, "instance" | "revokeDevice">,
  userId: string,
  options: { orgId?: string } = {},
): Promise<TestSignIn> {
  const ctx = await (await accounts.instance()).$context;
  const session = await ctx.internalAdapter.createSession(userId);
  if (options.orgId) await ctx.internalAdapter.updateSession(session.token, { activeOrganizationId: options.orgId });
  const signature = createHmac("sha256", ctx.secret).update(session.token).digest("base64");
  const cookie = `${ctx.authCookies.sessionToken.name}=${encodeURIComponent(`${session.token}.${signature}`)}`;
  return {
    cookie,
    authSessionId: session.id,
    revoke: async () => void (await accounts.revokeDevice(userId, session.id)),
  };
}
