// One Quiver server: the database, the composed services, tRPC over HTTP and WebSocket, the
// runner and browser sockets, the Next.js app, and (embedded mode) the local runner process.
// server/main.ts is the process around it; tests start it on port 0 without the web app.
// Who each request is (owner, share-link viewer, nobody) is decided by server/auth for every
// entry point here: tRPC over HTTP and WebSocket, the terminal socket, the preview, the pages.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { mkdirSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { createRequire } from "node:module";
import { WebSocketServer } from "ws";
import { createHTTPHandler } from "@trpc/server/adapters/standalone";
import { applyWSSHandler } from "@trpc/server/adapters/ws";
import { countedUpgrade, refuseSocket, trpcUpgrade, type UpgradeHandler } from "./http/trpc-upgrade";
import { EnvError, type Env } from "./env";
import { connectDb, defaultDbUrl, openDb, type DbHandle } from "./db";
import { lazyClient } from "./db/lazy-client";
import { lowerHelperThreads, restoreThreadPriorities } from "./priority";
import { appRouter } from "./api/root";
import { contextFor } from "./api/context";
import { createAuth, isDirectLoopback, isOperator, type Identity } from "./auth";
import { takeOwnCookies } from "./auth/cookie-jar";
import { viaHttps } from "./auth/cookies";
import { createAccounts, type Accounts } from "./auth/accounts";
import { SSO_BROWSER_PREFIXES, ssoAccounts } from "./auth/accounts/sso";
import { createSsoService } from "./services/sso";
import { startDomainRecheck } from "./services/sso-domain-recheck";
import { dnsTxtLookup } from "./services/sso-domains";
import { anyAccount } from "./auth/accounts/first-owner";
import { loadSecret } from "./auth/crypto";
import { isLoopbackAddress } from "./auth/identity";
import { createDoors } from "./auth/authorize-doors";
import { AUDIT_EXPORT_PATH, createAuditExport } from "./services/audit-export";
import { createShareService } from "./services/shares";
import { createUploads } from "./services/uploads";
import { createUploadsHttp } from "./services/uploads-http";
import { createOrgService } from "./services/orgs";
import { stopWorkOf } from "./services/orgs-work";
import { createGuard, pathRefusal } from "./http/guard";
import { createSocketLimits, type SocketLimits } from "./http/socket-limits";
import { CALL_BODY_MAX } from "./http/call-limits";
import { createBodyGate } from "./http/body-gate";
import { createPreviewHttp } from "./preview/http";
import { createPreviewTickets, dbUsedTickets } from "./preview/ticket";
import { parsePreviewHost } from "./protocol/preview";
import { defaultRunnerId } from "./protocol/runner-id";
import { looksAlike, variableOf } from "./executors/runner/bound-tokens";
import { ensureLocalActor } from "./services/local-user";
import { createSessionService } from "./services/sessions";
import { createModelLister } from "./services/model-list";
import { healthCheck, summarize } from "./services/health";
import { writeProbe } from "./db/probe";
import type { Actor, Services } from "./services/types";
import { LocalRunner } from "./local-runner";
import { createParts, type Parts } from "./parts";
import { logFn, scoped, setLogLevel } from "./log";
import { holdEventLoop } from "./loop-hold";
import { warmShellParser } from "./shell/parser";
import { adoptedThreads, endUnadoptedThreads } from "./build/early.mjs";
import { nonceForPage, pageContentSecurityPolicy } from "./http/page-csp";

export interface QuiverOptions {
  env: Env;
  /** Repository root (for Next and the runner entry point). */
  root: string;
  dev?: boolean;
  /** Serve the Next.js app (off in API-level tests). */
  web?: boolean;
  log?: (line: string) => void;
  /** Sockets per identity and subscriptions per socket (default: http/socket-limits.ts). */
  socketLimits?: SocketLimits;
}

export interface Quiver {
  url: string;
  port: number;
  services: Services;
  localRunner?: LocalRunner;
  /** People's accounts (server/auth/accounts): tests sign people in with its testing helper. */
  accounts: Accounts;
  stop(): Promise<void>;
}

export async function startQuiver(options: QuiverOptions): Promise<Quiver> {
  // Nothing pending in the loop must never mean "wait for every thread's background work" (loop-hold.ts).
  const release = holdEventLoop();
  try {
    const quiver = await start(options);
    // A thread start.mjs began for a database this server did not open has nothing to do.
    for (const entry of endUnadoptedThreads()) scoped("quiver").warn(`a thread started early was not used: ${entry}`);
    if (adoptedThreads()) scoped("quiver").debug(`threads started early and adopted: ${adoptedThreads()}`);
    return quiver;
  } catch (err) {
    endUnadoptedThreads(); // the start's own error says what went wrong
    throw err;
  } finally {
    release();
  }
}

async function start(options: QuiverOptions): Promise<Quiver> {
  const { env, root } = options;
  setLogLevel(env.QUIVER_LOG_LEVEL);
  const log = options.log ?? logFn("quiver", "info");
  mkdirSync(env.dataDir, { recursive: true });
  mkdirSync(env.workspaceDir, { recursive: true });
  // The local runner's id, as it would name itself (runner/main.ts), is bound to its per-start
  // token (below), so a holder of the shared token cannot connect as it and take its sessions and
  // their calls. Known only now, it is checked against the configured pairs here, before anything starts.
  const localRunnerId = defaultRunnerId(hostname(), realpathSync(env.workspaceDir));
  const taken = env.runnerBindings.find((b) => looksAlike(b.runnerId, localRunnerId));
  if (taken)
    throw new EnvError(
      `Invalid ${variableOf(taken)}: ${taken.from}: runner id ${JSON.stringify(taken.runnerId)} ${taken.runnerId === localRunnerId ? "is" : "looks like"} this server's local runner's id (${JSON.stringify(localRunnerId)}, from its host name and workspace folder), which is bound to the local runner's own token; give that runner another --id`,
    );

  const handle: DbHandle = await openDb(defaultDbUrl(env.dataDir, env.DATABASE_URL), { thread: true });
  if (handle.applied.length) log(`database (${handle.provider}): applied ${handle.applied.join(", ")}`);
  // The query thread starts with this first query, and on a busy machine its answer (Prisma
  // loaded there) takes seconds: the web app loads and prepares on this thread meanwhile.
  const accountExists = anyAccount(handle.db);
  const web = options.web === false ? undefined : startWeb(root, env, Boolean(options.dev), log);
  web?.catch(() => undefined); // awaited before listening, which fails with its error
  // With an account, the local owner's row is that account's (auth/accounts/first-owner.ts):
  // no local owner is made again, and nobody is one (NO_LOCAL_OWNER matches no row).
  const localActor: Actor = (await accountExists) ? NO_LOCAL_OWNER : await ensureLocalActor(handle.db);
  // Single sign-on of orgs (auth/accounts/sso.ts): better-auth's SSO plugin, settings in services/sso.ts.
  // Made with better-auth's instance, which accounts/index.ts loads only when accounts are on or used.
  const key = loadSecret(env.dataDir);
  let sso: ReturnType<typeof ssoAccounts> | undefined;
  const ssoParts = () => (sso ??= ssoAccounts({ db: handle.db, key, privateIssuers: env.QUIVER_SSO_PRIVATE_ISSUERS }));
  const accounts = await createAccounts({
    env,
    db: handle.db,
    provider: handle.provider,
    key,
    log,
    plugins: async () => [(await ssoParts()).plugin],
    browserPrefixes: SSO_BROWSER_PREFIXES,
    signUpGates: [async (email) => (await ssoParts()).signUpGate(email)],
    allowedHosts: [...env.QUIVER_ALLOWED_HOSTS, ...(isLoopbackAddress(env.HOST) ? [env.HOST] : [])],
  });

  // The local runner gets a fresh secret each start, bound to its id; remote runners use their
  // own (QUIVER_RUNNER_TOKENS, each bound to its id) or the shared QUIVER_RUNNER_TOKEN (any other id).
  const localRunnerToken = randomBytes(32).toString("base64url");
  const runnerTokens = [
    { token: localRunnerToken, runnerId: localRunnerId },
    ...env.runnerBindings.map(({ token, runnerId }) => ({ token, runnerId })),
    ...(env.QUIVER_RUNNER_TOKEN ? [env.QUIVER_RUNNER_TOKEN] : []),
  ];

  // A deleted session's commands, checkpoints and runner binding go with it: no more runner events published
  // for it. The delete does not wait for the runner; what it owes waits in a row (services/runner-chores.ts).
  const sessions = createSessionService(handle.db, {
    beforeRemove: (id) => parts.services.hub.written(id),
    onRemoved: (id) => void parts.chores.sessionRemoved(id),
    modelChoices: () => parts.services.engine.modelChoices(),
    workspaceFor: (actor, projectId) => parts.services.projects.workspaceFor(actor, projectId),
    models: createModelLister(env),
    prices: env.QUIVER_PRICES,
    dbProvider: handle.provider,
  });
  // Revoking a link drops its live viewers at once (auth is made just below).
  const shares = createShareService(handle.db, { onRevoked: (linkId) => auth.viewers.end(linkId, "revoked") });
  const auth = createAuth({ env, owner: localActor, shares, accounts, log });
  // Doors that are not tRPC procedures (terminal, preview, audit export) ask authorize() too.
  const doors = createDoors({ db: handle.db, identify: (req) => auth.identify(req) });
  const dbUrl = defaultDbUrl(env.dataDir, env.DATABASE_URL);
  const uploads = createUploads({ dataDir: env.dataDir });
  const parts: Parts = await createParts({
    env,
    uploads,
    db: handle.db,
    rows: handle.rows,
    dbProvider: handle.provider,
    dbUrl,
    runnerTokens,
    actorFor: (req) => auth.ownerOf(req),
    canUseSession: (actor, sessionId) => doors.person(actor, "terminal.open", sessionId),
    // Their Default project's workspace is the local runner's own folder (services/projects.ts).
    ...(localActor.userId ? { localOwner: { userId: localActor.userId, orgId: localActor.orgId } } : {}),
    log,
  });
  // Devices signed out and memberships changed on another instance end sockets here too.
  if (parts.cluster) {
    const cluster = parts.cluster;
    cluster.onPeopleChanged(() => void accounts.sockets.changed());
    accounts.setBroadcast(() => cluster.send({ type: "people.changed" }));
  }
  // Orgs, members and invitations (services/orgs.ts): their changes hold the org's row lock in an
  // interactive transaction, which the query thread does not run, so they get a client of their own,
  // made when first used (db/lazy-client.ts): most starts never change an org.
  const orgDb = lazyClient(() => connectDb(dbUrl));
  const orgs = createOrgService({
    db: orgDb,
    accountsOn: () => accounts.on(),
    closeSockets: (target, reason) => accounts.endSockets(target, reason),
    stopWork: (target, revoked, stopped) =>
      stopWorkOf({ db: handle.db, ...parts.services, shares, chores: parts.chores }, target, revoked, stopped),
    sendMail: accounts.mailer.smtp ? (mail) => accounts.mailer.send(mail) : undefined,
    log,
  });
  // Proven SSO domains are looked at again daily; one whose record stays gone is given up.
  const txtLookup = dnsTxtLookup(env.QUIVER_SSO_DNS_SERVERS);
  const domainRecheck = startDomainRecheck({ db: handle.db, direct: orgDb, key, txtLookup }, { log });
  const services: Services = {
    env,
    db: handle.db,
    dbProvider: handle.provider,
    sessions,
    shares,
    orgs,
    sso: createSsoService({
      db: handle.db,
      key,
      privateIssuers: env.QUIVER_SSO_PRIVATE_ISSUERS,
      accountsOn: () => accounts.on(),
      txtLookup,
    }),
    ...parts.services,
    health: healthCheck({
      db: handle.db,
      provider: handle.provider,
      runners: parts.services.runners,
      probe: writeProbe(handle.db, handle.provider),
      dataDir: env.dataDir,
      minFreeMb: env.QUIVER_MIN_FREE_DISK_MB,
    }),
  };

  // The database's write probe runs now, on the query thread while the web app loads here: the
  // first /api/health reuses its answer (kept a few seconds) instead of waiting for three queries.
  void services.health().catch(() => undefined);

  const bodyGate = createBodyGate({ identify: (req) => auth.identify(req), maxBytes: CALL_BODY_MAX });
  const trpcHttp = createHTTPHandler({
    router: appRouter,
    createContext: async ({ req }) => ({ ...contextFor(services, await auth.identify(req)), overHttp: true }),
    basePath: "/api/trpc/",
    maxBodySize: CALL_BODY_MAX,
  });
  const trpcWss = new WebSocketServer({ noServer: true, maxPayload: 4 * 1024 * 1024 });
  const socketLimits = createSocketLimits(options.socketLimits);
  const trpcWs = applyWSSHandler({
    wss: trpcWss,
    router: appRouter,
    // Identified at upgrade; a viewer's socket is registered so its link's end closes it (and its
    // link checked again once registered: auth/viewers.ts), before any call on it runs.
    createContext: async ({ req, res: ws }) => {
      const id = await auth.identify(req);
      return {
        ...contextFor(services, id, id.kind === "viewer" ? await auth.viewers.attach(id.linkId, ws) : undefined),
        connection: socketLimits.connection(ws, req.socket),
      };
    },
    keepAlive: { enabled: true, pingMs: 20_000, pongWaitMs: 10_000 },
  });

  const { app: nextApp, handler: nextHandler } = (await web) ?? {};

  // The loopback address the server binds (HOST=127.0.0.2) is a host it answers to: a Host that
  // is a loopback IP literal was typed as such, never reached through a rebound DNS name.
  // Project archives (POST /api/uploads by a person; GET /api/uploads/<id> by a runner's token).
  const uploadsHttp = createUploadsHttp({
    uploads,
    actorOf: async (req) => {
      const id = await auth.identify(req);
      return id.kind === "owner" ? id.actor : null;
    },
    admitRunner: (req) => parts.services.runners.admitToken(req),
  });
  const guard = createGuard({
    allowedHosts: [...env.QUIVER_ALLOWED_HOSTS, ...(isLoopbackAddress(env.HOST) ? [env.HOST] : [])],
  });
  // A page loads dozens of modules: a person's access to a session is looked up every few seconds at most.
  const ownerSessions = cachedCheck((key) => {
    const [userId, orgId, role, sessionId] = key.split(" ");
    return doors.person({ userId, orgId, role: role as Actor["role"] }, "preview.open", sessionId);
  }, 5_000);
  // The live preview: a host of its own per session and port, forwarded to the runner (server/preview/http.ts);
  // a browser away from this machine gets in with a ticket its IDE asks for (server/preview/entry.ts).
  const preview = createPreviewHttp({
    bridge: services.runners.preview,
    runner: services.runners,
    isOwner: (req) => auth.isOwner(req),
    // The person identified by isOwner; a request a ticket admitted was not asked (the ticket is
    // the IDE's, given to someone with access): the session must still exist.
    ownerSession: async (sessionId, req) => {
      const actor = auth.ownerOf(req) ?? ((await accounts.on()) ? null : localActor);
      if (!actor) return (await handle.db.session.count({ where: { id: sessionId } })) > 0;
      return ownerSessions.has(`${actor.userId} ${actor.orgId} ${actor.role} ${sessionId}`);
    },
    tickets: createPreviewTickets({ key: auth.previewKey, used: dbUsedTickets(handle.db) }),
    accountsOn: () => accounts.on(),
    // A preview cookie is its person's: it stops working, and their preview sockets close, when
    // their device is signed out or their membership goes or changes (as the IDE's sockets).
    holderOf: (req) => auth.signedInOf(req),
    holds: (holder) => accounts.sockets.holds(holder),
    register: (socket, holder) => accounts.sockets.register(socket, holder),
    log,
  });
  const auditExport = createAuditExport({ db: handle.db, doors, log });
  const server: Server = createServer((req, res) => {
    const refused = guard.check(req, { requireSameOrigin: req.method !== "GET" && req.method !== "HEAD" });
    if (refused) return reply(res, 403, { error: refused });
    const previewTarget = parsePreviewHost(req.headers.host);
    if (previewTarget) return preview.handle(req, res, previewTarget);
    takeOwnCookies(req, viaHttps(req));
    // No other origin frames Quiver's own pages: a previewed app or any site would get the IDE
    // (the local owner's without a cookie) under its own page, one click from an approval. The
    // rest of the policy keeps agent-written text from loading or sending anything off the host.
    res.setHeader(
      "content-security-policy",
      pageContentSecurityPolicy({ host: req.headers.host, dev: Boolean(options.dev) }),
    );
    res.setHeader("x-frame-options", "SAMEORIGIN");
    const unresolved = pathRefusal(req.url);
    if (unresolved) return reply(res, 400, { error: unresolved });
    const path = (req.url ?? "/").split("?")[0];
    if (path === "/api/preview/ports") return preview.ports(req, res);
    if (path === "/api/preview/ticket") return preview.ticket(req, res);
    if (path === "/api/preview/open") return preview.open(req, res);
    if (path === "/api/health") {
      // 503 while the database cannot be used at all; other problems are in the report (ok: false).
      // The whole report is the operator's, or a monitor's on this machine (services/health.ts).
      void Promise.all([services.health(), auth.identify(req).catch((): Identity => ({ kind: "anonymous" }))]).then(
        ([report, id]) =>
          reply(
            res,
            report.database.up && report.database.writable ? 200 : 503,
            isOperator(id) || isDirectLoopback(req) ? report : summarize(report),
          ),
      );
      return;
    }
    if (path.startsWith("/api/trpc/")) return void bodyGate(req, res, () => trpcHttp(req, res));
    if (uploadsHttp.handle(req, res)) return;
    if (path === AUDIT_EXPORT_PATH) return void auditExport(req, res);
    // better-auth's endpoints (sign-in, sign-up, sign-out, password): server/auth/accounts.
    if (accounts.handle(req, res)) return;
    if (auth.routes.handle(req, res)) return;
    if (!nextHandler) return reply(res, 404, { error: "not found" });
    const next = nextHandler;
    auth.guardPage(req, res, () => {
      nonceForPage(req, res, Boolean(options.dev));
      void next(req, res);
    });
  });

  const upgrades = new Map<string, UpgradeHandler>([
    [
      "/api/trpc",
      // Identified by now (auth.guardUpgrade); an identity over its bound of sockets is refused.
      trpcUpgrade({ identify: (req) => auth.identify(req), limits: socketLimits, wss: trpcWss, log }),
    ],
    ...parts.upgrades.map(([path, handler]): [string, UpgradeHandler] =>
      path === "/runner"
        ? [path, handler]
        : [path, countedUpgrade({ identify: (r) => auth.identify(r), limits: socketLimits }, handler)],
    ),
  ]);
  server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const path = (req.url ?? "/").split("?")[0];
    // Everything on a preview host belongs to the previewed app, never to Quiver's own sockets.
    const previewTarget = parsePreviewHost(req.headers.host);
    if (!previewTarget) takeOwnCookies(req, viaHttps(req));
    const handler: UpgradeHandler | undefined = previewTarget
      ? (r, s, h) => preview.handleUpgrade(r, s, h, previewTarget)
      : upgrades.get(path);
    // Runners are not browsers: they authenticate with a token instead of an origin. The Host
    // check comes first for every path, known or not.
    const refused = guard.check(req, { requireSameOrigin: previewTarget !== undefined || path !== "/runner" });
    if (refused) return refuseSocket(socket, 403, "Forbidden", refused);
    const unresolved = previewTarget ? null : pathRefusal(req.url);
    if (unresolved) return refuseSocket(socket, 400, "Bad Request", unresolved);
    if (!handler) {
      // Next's dev server answers its own hot-reload socket; any other path is nobody's.
      if (options.dev && path.startsWith("/_next/")) return;
      return refuseSocket(socket, 404, "Not Found", `no WebSocket at ${path}`);
    }
    if (previewTarget || path === "/runner") return handler(req, socket, head);
    // Quiver's own browser sockets: decided once here; the terminal asks auth.ownerOf(req).
    auth.guardUpgrade(req, socket, () => handler(req, socket, head));
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(env.PORT, env.HOST, () => resolve());
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : env.PORT;
  auth.listening(port);
  // Serving from here on: V8's and libuv's helper threads exist by now (priority.ts).
  lowerHelperThreads();
  // Not while the first health checks and page loads come in; long before anyone's first command.
  setTimeout(warmShellParser, 2_000).unref();
  const hostForUrl = env.HOST.includes(":") ? `[${env.HOST}]` : env.HOST;
  const url = `http://${hostForUrl === "0.0.0.0" ? "127.0.0.1" : hostForUrl}:${port}`;

  let localRunner: LocalRunner | undefined;
  if (env.QUIVER_LOCAL_RUNNER === "1") {
    localRunner = new LocalRunner({
      root,
      serverUrl: `${url.replace(/^http/, "ws")}/runner`,
      token: localRunnerToken,
      id: localRunnerId,
      workspace: env.workspaceDir,
      workspacesRoot: join(env.dataDir, "workspaces"),
      dataDir: env.dataDir,
      // Files of secrets the runner's user may read wherever they lie: the agent's commands may not
      // (the tokens file would let them connect as every remote runner it names).
      hideFiles: [env.QUIVER_MCP_CONFIG, env.QUIVER_RUNNER_TOKENS_FILE].filter((f): f is string => Boolean(f)),
      host: env.HOST,
      logLevel: env.QUIVER_LOG_LEVEL,
      log,
    });
    localRunner.start();
  }

  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      // No more tokens to put first; the threads' ends wait for the helpers' work (priority.ts).
      restoreThreadPriorities();
      domainRecheck.stop();
      await localRunner?.stop();
      trpcWs.broadcastReconnectNotification();
      for (const client of trpcWss.clients) client.terminate();
      trpcWss.close();
      preview.dispose();
      auth.dispose();
      accounts.dispose();
      await parts.dispose();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await nextApp?.close?.();
      await orgDb.$disconnect();
      await handle.close();
    })());

  return { url, port, services, localRunner, accounts, stop };
}

/** The Next.js app, built first when its build is stale (`npm start`) or with hot reload (`dev`). */
async function startWeb(root: string, env: Env, dev: boolean, log: (line: string) => void) {
  // Required, not imported: Node's import() reads the file through libuv's thread pool, four
  // round trips that on a busy machine, with the query thread loading its own modules there,
  // left the main thread idle for a second before Next began to load.
  // Next.js's own modules are loaded without Node's source maps where they are on (tsx turns them
  // on: `npm run dev`, the tests): Node would read and parse the map of each of the hundreds of
  // files Next loads, its 4 MB page runtime's included. `npm start` maps its traces lazily instead
  // (build/stack-maps.mjs).
  const maps = process.sourceMapsEnabled;
  process.setSourceMapsEnabled(false);
  try {
    const next = createRequire(import.meta.url)("next") as typeof import("next").default;
    if (!dev) await (await import("./next-build")).ensureNextBuild(root, log);
    const app = next({ dev, dir: root, hostname: env.HOST, port: env.PORT });
    await app.prepare();
    const handler: (req: IncomingMessage, res: ServerResponse) => Promise<void> = app.getRequestHandler();
    return { app: app as unknown as { close?: () => Promise<void> }, handler };
  } finally {
    process.setSourceMapsEnabled(maps);
  }
}

/** The local owner once accounts exist: no user has an empty id, so it is nobody's access. */
const NO_LOCAL_OWNER: Actor = { userId: "", orgId: "", role: "member" };

/** A yes/no check whose yes is remembered for `ms` (a no is asked again next time). */
function cachedCheck(check: (key: string) => Promise<boolean>, ms: number) {
  const until = new Map<string, number>();
  return {
    async has(key: string): Promise<boolean> {
      if ((until.get(key) ?? 0) > Date.now()) return true;
      const ok = await check(key);
      if (ok) until.set(key, Date.now() + ms);
      return ok;
    },
  };
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" });
  res.end(JSON.stringify(body));
}
