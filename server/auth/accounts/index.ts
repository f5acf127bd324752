// Accounts: people who sign in with an email and a password (better-auth, accounts/instance.ts),
// each a member of orgs with a role. This module is the server's side of them:
//  - the mode: off (loopback, no account: the local owner, as an embedded server always was) or
//    on (QUIVER_AUTH=accounts, HOST off loopback, or once the first account exists — for good);
//  - better-auth's HTTP endpoints at /api/auth/* (only the ones Quiver's pages use: org changes
//    go through tRPC, where the rules and the audit are), sign-in attempts rate limited;
//  - /api/auth/first-owner: the first account takes over the local owner's row (first-owner.ts),
//    from this machine directly or with the one-time setup URL printed at start;
//  - who a request is (`personOf`): the person of a better-auth session cookie, in their active org;
//  - the sockets of signed-in people (sockets.ts), ended when a device or membership goes;
//  - /api/auth/devices (GET) and /api/auth/devices/revoke (POST { id }): the person's devices.
// The better-auth instance (and its plugins) is made on first use, or at once when accounts are
// on at start: with accounts off nothing of better-auth is loaded (about a second of a start).
import type { IncomingMessage, ServerResponse } from "node:http";
import type { BetterAuthPlugin } from "better-auth";
import type { Env } from "../../env";
import { isLoopbackHost } from "../../env";
import type { Db, DbProvider } from "../../db";
import type { Actor } from "../../services/types";
import { deriveKey, hashToken, newToken, sameText } from "../crypto";
import { viaHttps } from "../cookies";
import { ownSetCookie } from "../cookie-jar";
import { isDirectLoopback } from "../identity";
import { requestAddress } from "../../http/address-key";
import { parsePreviewHost } from "../../protocol/preview";
import { CLIENT_ADDRESS_HEADER, createAccountsInstance, type AccountsInstance } from "./instance";
import { createMailer } from "./mailer";
import { createSignInLimiter, INVALID_EMAIL, signInEmail, type SignInLimits } from "./rate-limit";
import { createInvitedSignUps } from "./invited-sign-up";
import { anyAccount, FirstOwnerError, takeOverLocalOwner } from "./first-owner";
import { createPeopleSockets, type SocketMatch } from "./sockets";

export { SIGNED_OUT_CLOSE, type SocketMatch } from "./sockets";

/** better-auth's paths (after /api/auth) a browser may call; everything else is 404 over HTTP. */
const BROWSER_PATHS = new Set([
  "/sign-in/email",
  "/sign-up/email",
  "/sign-out",
  "/get-session",
  "/change-password",
  "/update-user",
  "/request-password-reset",
  "/reset-password",
  "/ok",
  "/error",
]);
const BROWSER_PREFIXES = ["/reset-password/"];
/** What may follow a prefix ending in "/": one segment (a token, a provider's id), nothing that
 *  better-auth's router could read as another path. */
const ONE_SEGMENT = /^[A-Za-z0-9_-]+$/;

/** A path browsers may call: one of the paths, or a prefix ending in "/" and one segment (a
 *  prefix without the "/" is a path of its own). */
export function browserMayCall(path: string, prefixes: readonly string[]): boolean {
  if (BROWSER_PATHS.has(path)) return true;
  return prefixes.some((p) =>
    p.endsWith("/") ? path.startsWith(p) && ONE_SEGMENT.test(path.slice(p.length)) : path === p,
  );
}
const MAX_BODY = 64 * 1024;

export interface AccountsDeps {
  env: Pick<Env, "dataDir" | "HOST" | "QUIVER_AUTH" | "QUIVER_SIGNUP" | "QUIVER_SMTP_URL" | "QUIVER_MAIL_FROM">;
  db: Db;
  provider: DbProvider;
  /** The data folder's cookie key (auth/crypto.ts): better-auth's secret is derived from it. */
  key: Buffer;
  log(line: string): void;
  limits?: SignInLimits;
  /** Plugins other parts add (the SSO plugin; loaded with the instance), and the paths of theirs
   *  browsers may call (prefixes after /api/auth). */
  plugins?: BetterAuthPlugin[] | (() => Promise<BetterAuthPlugin[]>);
  browserPrefixes?: string[];
  /** More reasons a new person may sign up (an SSO sign-in …), with better-auth's path of the
   *  request making the user; invitations and open sign-up are built in (password sign-up only). */
  signUpGates?: Array<(email: string, path?: string) => Promise<boolean>>;
  /** Host names the server answers to (the guard's list). */
  allowedHosts?: string[];
  /** How often open sockets are re-checked against devices and memberships (default 5 s). */
  recheckMs?: number;
}

export interface Device {
  id: string;
  userAgent: string | null;
  ipAddress: string | null;
  createdAt: Date;
  /** Last seen (the session row's refresh). */
  updatedAt: Date;
  expiresAt: Date;
  current: boolean;
}

/** A signed-in person: in an org (`actor`), or in none (removed from every org they were in). */
export type Person = { actor: Actor; authSessionId: string } | { actor: null; userId: string; authSessionId: string };

export async function createAccounts(deps: AccountsDeps) {
  const { db, env, log } = deps;
  /** Accounts are required by configuration (they may not exist yet). */
  const required = env.QUIVER_AUTH === "accounts" || !isLoopbackHost(env.HOST);
  let exists = await anyAccount(db);
  let existsCheckedAt = Date.now();
  let broadcast: (() => Promise<void>) | undefined;

  const mailer = createMailer({ smtpUrl: env.QUIVER_SMTP_URL, from: env.QUIVER_MAIL_FROM, log });
  const limiter = createSignInLimiter(db, deps.limits, log);
  const sockets = createPeopleSockets({
    db,
    broadcast: () => broadcast?.() ?? Promise.resolve(),
    recheckMs: deps.recheckMs,
    log,
  });

  const invitedSignUps = createInvitedSignUps(db);
  /** better-auth's gate before it makes a user (`use: "take"`), and the same question asked
   *  before the request is passed to it (`"peek"`). */
  async function mayCreateUser(email: string, path?: string, use: "peek" | "take" = "take"): Promise<boolean> {
    // The first account is the local owner's row (/api/auth/first-owner), never a new one.
    if (!(await anyAccount(db))) return false;
    const bypassword = path === undefined || path === "/sign-up/email";
    if (bypassword && env.QUIVER_SIGNUP === "open") return true;
    if (bypassword && invitedSignUps.admitted(email.toLowerCase(), use)) return true;
    for (const gate of deps.signUpGates ?? []) if (await gate(email, path)) return true;
    return false;
  }

  const makeInstance = async () =>
    createAccountsInstance({
      db,
      provider: deps.provider,
      secret: deriveKey(deps.key, "accounts").toString("base64url"),
      sendResetPassword: async ({ email, url }) => {
        // Whether the mail left is not the requester's business (it would say the address exists).
        await mailer
          .send({
            to: email,
            subject: "Reset your Quiver password",
            text: `Someone asked to reset the password of your Quiver account.\nTo choose a new one, open: ${url}\nThe link works once, for an hour. If it was not you, ignore this mail.`,
          })
          .catch(() => undefined);
      },
      signUpGate: mayCreateUser,
      allowedHosts: deps.allowedHosts ?? ["localhost", "127.0.0.1", "::1"],
      onUserCreated: async (user) => {
        // Everyone has an org of their own to work in; invitations add them to others.
        const slug = `u-${newToken(9)
          .toLowerCase()
          .replace(/[^a-z0-9]/g, "x")}`;
        await db.org.create({
          data: {
            slug,
            name: `${user.name || user.email}'s org`,
            memberships: { create: { userId: user.id, role: "owner" } },
          },
        });
      },
      extraPlugins: typeof deps.plugins === "function" ? await deps.plugins() : deps.plugins,
    });
  let made: Promise<AccountsInstance> | undefined;
  /** The better-auth instance, made (its packages loaded) on first call; a failed making is retried. */
  const instance = (): Promise<AccountsInstance> =>
    (made ??= makeInstance().catch((err) => {
      made = undefined;
      throw err;
    }));
  // With accounts on, requests will need it: loaded while the server starts, not by the first sign-in.
  if (required || exists)
    instance().catch((err) => log(`accounts: better-auth did not load: ${(err as Error).message}`));

  // The one-time URL that creates the first owner from another machine.
  let setupHash = "";
  const newSetupPath = () => {
    const token = newToken(24);
    setupHash = hashToken(token);
    return `/signup?setup=${token}`;
  };

  /** True when accounts are on: configured, or an account exists (here or, within a second, on another instance). */
  async function on(): Promise<boolean> {
    if (required || exists) return true;
    if (Date.now() - existsCheckedAt > 1_000) {
      exists = await anyAccount(db);
      existsCheckedAt = Date.now();
    }
    return exists;
  }

  async function personOf(req: IncomingMessage): Promise<Person | null> {
    const cookie = req.headers.cookie;
    if (!cookie || !cookie.includes("session_token")) return null;
    // The host too: better-auth resolves its base URL from it (checked by http/guard.ts already).
    // A live preview's host (5173-<session>.localhost) is not one better-auth knows: the IDE's host under it is.
    const host = parsePreviewHost(req.headers.host)?.base ?? req.headers.host ?? "localhost";
    const found = await (
      await instance()
    ).api.getSession({
      headers: new Headers({ cookie, host }),
      query: { disableRefresh: true },
    });
    if (!found) return null;
    const memberships = await db.membership.findMany({
      where: { userId: found.user.id },
      orderBy: { createdAt: "asc" },
    });
    const active = (found.session as { activeOrganizationId?: string | null }).activeOrganizationId;
    const m = memberships.find((x) => x.orgId === active) ?? memberships[0];
    if (!m) return { actor: null, userId: found.user.id, authSessionId: found.session.id };
    return {
      actor: { userId: found.user.id, orgId: m.orgId, role: m.role as Actor["role"], authSessionId: found.session.id },
      authSessionId: found.session.id,
    };
  }

  function readBody(req: IncomingMessage): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      req.on("data", (c: Buffer) => {
        size += c.length;
        if (size > MAX_BODY) return reject(Object.assign(new Error("request body too large"), { status: 413 }));
        chunks.push(c);
      });
      req.on("end", () => resolve(Buffer.concat(chunks)));
      req.on("error", reject);
    });
  }

  function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
    res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store", ...headers });
    res.end(JSON.stringify(body));
  }

  /** better-auth's answer to a request made of this one's method, headers and `body`. */
  async function forward(req: IncomingMessage, body: Buffer | undefined, path = req.url ?? "/"): Promise<Response> {
    const headers = headersOf(req);
    headers.delete("content-length"); // the body may be ours (signUp), measured anew
    const origin = `${viaHttps(req) ? "https" : "http"}://${req.headers.host ?? "localhost"}`;
    // A call of our own (the first owner's sign-in) is same-origin whatever client asked.
    if (path !== req.url) headers.set("origin", origin);
    // The address the devices page shows: the socket's, never a header the client wrote.
    headers.set(CLIENT_ADDRESS_HEADER, req.socket.remoteAddress ?? "unknown");
    const url = `${origin}${path}`;
    return (await instance()).handler(
      new Request(url, {
        method: req.method,
        headers,
        body: body && body.length > 0 ? new Uint8Array(body) : undefined,
      }),
    );
  }

  async function send(req: IncomingMessage, res: ServerResponse, answer: Response): Promise<void> {
    const headers: Record<string, string | string[]> = {};
    answer.headers.forEach((v, k) => {
      if (k !== "set-cookie") headers[k] = v;
    });
    const https = viaHttps(req);
    const cookies = answer.headers.getSetCookie().map((c) => ownSetCookie(c, https));
    if (cookies.length) headers["set-cookie"] = cookies;
    headers["cache-control"] = "no-store";
    res.writeHead(answer.status, headers);
    res.end(Buffer.from(await answer.arrayBuffer()));
  }

  const jsonOf = (body: Buffer): Record<string, unknown> => {
    try {
      const v = JSON.parse(body.toString("utf8"));
      return v && typeof v === "object" ? v : {};
    } catch {
      return {};
    }
  };
  const text = (v: unknown) => (typeof v === "string" ? v : "");

  async function firstOwner(req: IncomingMessage, res: ServerResponse, body: Buffer): Promise<void> {
    const input = jsonOf(body);
    const direct = isDirectLoopback(req);
    const setup = text(input.setup);
    if (!direct && !(setup && setupHash && sameText(hashToken(setup), setupHash))) {
      return json(res, 403, {
        message:
          "Creating the first owner from another machine needs the one-time setup URL the server printed at start (…/signup?setup=…).",
      });
    }
    const name = text(input.name).trim();
    const email = text(input.email).trim().toLowerCase();
    const password = text(input.password);
    if (!name || name.length > 100) return json(res, 400, { message: "Give a name (at most 100 characters)." });
    if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email) || email.length > 254)
      return json(res, 400, { message: "Give a valid email address." });
    if (password.length < 10 || password.length > 256)
      return json(res, 400, { message: "The password needs 10 to 256 characters." });
    const ctx = await (await instance()).$context;
    try {
      await takeOverLocalOwner(db, { name, email, passwordHash: await ctx.password.hash(password) });
    } catch (err) {
      if (err instanceof FirstOwnerError) return json(res, err.status, { message: err.message });
      throw err;
    }
    exists = true;
    setupHash = "";
    log(`accounts are on: ${email} is the first owner (the local owner's sessions, policies and history are theirs)`);
    // Signed in as better-auth signs anyone in: the same cookie, the same session row.
    const signIn = await forward(req, Buffer.from(JSON.stringify({ email, password })), "/api/auth/sign-in/email");
    await send(req, res, signIn);
  }

  async function signIn(req: IncomingMessage, res: ServerResponse, body: Buffer): Promise<void> {
    // An email no account can have is refused before anything is counted: nothing of it is written.
    const email = signInEmail(jsonOf(body).email);
    if (email === null) return json(res, 400, INVALID_EMAIL);
    const admitted = await limiter.admit(email, requestAddress(req));
    if (!admitted.ok) {
      log(`sign-in refused (too many failures for this ${admitted.reason}, retry in ${admitted.retryAfterSeconds} s)`);
      return json(
        res,
        429,
        {
          code: "TOO_MANY_ATTEMPTS",
          message: `Too many failed sign-ins for this ${admitted.reason === "account" ? "account" : "address"}. Try again in ${Math.ceil(admitted.retryAfterSeconds / 60)} minute(s).`,
        },
        { "retry-after": String(admitted.retryAfterSeconds) },
      );
    }
    const answer = await forward(req, body);
    if (answer.ok) await admitted.succeeded();
    await send(req, res, answer);
  }

  /** The settings page's "signed in on these devices": GET the list, POST { id } to sign one out. */
  async function devicesRoute(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    body: Buffer | undefined,
  ): Promise<void> {
    const person = await personOf(req);
    if (!person) return json(res, 401, { message: "Not signed in." });
    const userId = person.actor?.userId ?? (person as { userId: string }).userId;
    if (path === "/devices" && req.method === "GET")
      return json(res, 200, { devices: await devicesOf(userId, person.authSessionId) });
    if (path === "/devices/revoke" && req.method === "POST") {
      const id = text(jsonOf(body ?? Buffer.alloc(0)).id);
      if (!id) return json(res, 400, { message: "Say which device (id)." });
      const revoked = await revokeDevice(userId, id);
      return revoked ? json(res, 200, { revoked: true }) : json(res, 404, { message: "No such device of yours." });
    }
    return json(res, 405, { message: "method not allowed" });
  }

  async function devicesOf(userId: string, currentId?: string): Promise<Device[]> {
    const rows = await db.authSession.findMany({
      where: { userId, expiresAt: { gt: new Date() } },
      orderBy: { updatedAt: "desc" },
      select: { id: true, userAgent: true, ipAddress: true, createdAt: true, updatedAt: true, expiresAt: true },
    });
    return rows.map((r) => ({ ...r, current: r.id === currentId }));
  }

  async function revokeDevice(userId: string, authSessionId: string): Promise<boolean> {
    const { count } = await db.authSession.deleteMany({ where: { id: authSessionId, userId } });
    if (count > 0) await sockets.end({ authSessionId }, "signed out");
    return count > 0;
  }

  /** A new account: open sign-up, or the invited address with its link's token (`invitation`). */
  async function signUp(req: IncomingMessage, res: ServerResponse, body: Buffer): Promise<void> {
    const { invitation, ...input } = jsonOf(body);
    // The address an account signs in with later: one sign-in refuses (over 254 characters, or
    // not an email) could never be used, nor should it be stored.
    const email = signInEmail(input.email);
    if (email === null) return json(res, 400, INVALID_EMAIL);
    const byLink = invitation !== undefined && (await invitedSignUps.admit(text(invitation), email));
    if (invitation !== undefined && !byLink)
      return json(res, 403, {
        code: "INVITATION_INVALID",
        message: "This invitation link is not valid for this address (used, revoked or expired): ask for a new one.",
      });
    if (!(await mayCreateUser(email, "/sign-up/email", "peek")))
      return json(res, 403, {
        code: "SIGN_UP_CLOSED",
        message: (await anyAccount(db))
          ? "Accounts on this server are by invitation: open the invitation link you were sent."
          : "This server has no owner yet: create the first owner instead.",
      });
    const answer = await forward(req, Buffer.from(JSON.stringify(input)));
    if (answer.ok && byLink) await invitedSignUps.verified(email);
    await send(req, res, answer);
  }

  async function route(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    const body = req.method === "GET" || req.method === "HEAD" ? undefined : await readBody(req);
    // Where better-auth sends the browser next is a path of this server, never another site.
    const offsite = offsiteRedirect(new URL(req.url ?? "/", "http://x").searchParams, body ? jsonOf(body) : {});
    if (offsite)
      return json(res, 400, {
        code: "REDIRECT_NOT_ALLOWED",
        message: `${offsite} must be a path on this server (starting with one /).`,
      });
    if (path === "/first-owner" && req.method === "POST") return firstOwner(req, res, body!);
    if (path === "/mode" && req.method === "GET") {
      return json(res, 200, {
        accounts: await on(),
        firstOwner: !(await anyAccount(db)),
        signUp: env.QUIVER_SIGNUP,
        mail: mailer.smtp,
      });
    }
    if (path === "/devices" || path === "/devices/revoke") return devicesRoute(req, res, path, body);
    if (!browserMayCall(path, [...BROWSER_PREFIXES, ...(deps.browserPrefixes ?? [])]))
      return json(res, 404, { message: "not found" });
    if (path === "/sign-in/email" && req.method === "POST") return signIn(req, res, body!);
    if (path === "/sign-up/email" && req.method === "POST") return signUp(req, res, body!);
    const signingOut = path === "/sign-out" ? await personOf(req) : null;
    const answer = await forward(req, body);
    await send(req, res, answer);
    if (signingOut && answer.ok) await sockets.end({ authSessionId: signingOut.authSessionId });
    // A password change may have signed other devices out: their sockets go now.
    else if (answer.ok && path === "/change-password") await sockets.recheckEverywhere();
  }

  return {
    /** better-auth's instance, loaded on first call (at start when accounts are on). */
    instance,
    mailer,
    limiter,
    sockets,
    /** Accounts required by configuration (QUIVER_AUTH=accounts, HOST off loopback). */
    required,
    on,
    personOf,
    /** Handles /api/auth/* (true), or leaves the request alone (false). */
    handle(req: IncomingMessage, res: ServerResponse): boolean {
      const path = (req.url ?? "/").split("?")[0];
      if (!path.startsWith("/api/auth/")) return false;
      route(req, res, path.slice("/api/auth".length)).catch((err: Error & { status?: number }) => {
        if (!res.headersSent)
          json(res, err.status ?? 500, {
            message: err.status ? err.message : "The server could not complete this; try again.",
          });
        if (!err.status) log(`accounts: ${req.method} ${path} failed: ${err.message}`);
      });
      return true;
    },
    /** A one-time path that creates the first owner (while none exists), or null. */
    async setupPath(): Promise<string | null> {
      return (await anyAccount(db)) ? null : newSetupPath();
    },
    /** The person's signed-in devices, newest first (`current`: the one asking). */
    devices: devicesOf,
    /** Signs one of the person's devices out: its row goes, then its open sockets (here and on other instances). */
    revokeDevice,
    /** Ends the sockets of a device or a person (everywhere or in one org); see sockets.ts. */
    endSockets: (match: SocketMatch, reason?: string) => sockets.end(match, reason),
    /** How other instances are told (set once the cluster exists). */
    setBroadcast(fn: () => Promise<void>) {
      broadcast = fn;
    },
    dispose() {
      sockets.dispose();
      limiter.dispose();
      mailer.close();
    },
  };
}

export type Accounts = Awaited<ReturnType<typeof createAccounts>>;

/** A request's headers as fetch's Headers (a repeated header keeps each of its values). */
function headersOf(req: IncomingMessage): Headers {
  const headers = new Headers();
  for (const [key, value] of Object.entries(req.headers)) {
    if (Array.isArray(value)) for (const v of value) headers.append(key, v);
    else if (value !== undefined) headers.set(key, value);
  }
  return headers;
}

const REDIRECT_FIELDS = [
  "callbackURL",
  "redirectTo",
  "errorCallbackURL",
  "newUserCallbackURL",
  "callbackUrl",
  "redirectURL",
];

/** The first redirect field (query or JSON body) that is not a same-site path, or null. */
export function offsiteRedirect(query: URLSearchParams, body: Record<string, unknown>): string | null {
  for (const field of REDIRECT_FIELDS) {
    for (const value of [query.get(field), body[field]]) {
      if (value === null || value === undefined) continue;
      if (typeof value !== "string" || !/^\/(?![/\\])/.test(value) || /[\u0000-\u001f\\]/.test(value)) return field;
    }
  }
  return null;
}
