// Preview tickets end to end below the browser: the whole server (port 0, no web app), a real
// runner process and an app on a real port. The owner is "on another machine" (a proxy header,
// so not loopback) and signed in with the printed one-time URL; the preview host knows nothing
// of that cookie, so it refuses until a ticket from the IDE's host is redeemed for its own cookie.
import { createServer, request, type IncomingMessage, type Server } from "node:http";
import { rmSync } from "node:fs";
import { join } from "node:path";
import WebSocket from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTRPCClient, httpBatchLink } from "@trpc/client";
import { testServerEnv } from "../testing/env";
import { startQuiver, type Quiver } from "../app";
import type { AppRouter } from "../api/root";
import { deriveKey, loadSecret } from "../auth/crypto";
import { SHARE_VIEW_HEADER } from "../protocol/share-view";
import { spawnRunner, tempDir, TEST_TOKEN, waitFor, type RunnerChild } from "../testing/runner";
import { createPreviewTickets } from "./ticket";

const root = join(import.meta.dirname, "../..");
const AWAY = { "x-forwarded-for": "203.0.113.7" };

let quiver: Quiver;
let runner: RunnerChild;
let app: Server;
let appPort: number;
let sessionId: string;
let otherSession: string;
let dataDir: string;
let workspace: string;
let signedIn: string; // the owner's cookie pair on the IDE's host
const logs: string[] = [];

interface Reply {
  status: number;
  headers: IncomingMessage["headers"];
  body: string;
}

/** A request to the server as a browser away from this machine makes it (any Host). */
function send(
  path: string,
  o: { host?: string; method?: string; headers?: Record<string, string> } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const headers = { host: o.host ?? `127.0.0.1:${quiver.port}`, ...AWAY, ...o.headers };
    const req = request({ host: "127.0.0.1", port: quiver.port, path, method: o.method ?? "GET", headers }, (res) => {
      let body = "";
      res.on("data", (c: Buffer) => (body += c.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on("error", reject);
    req.end();
  });
}
const hostOf = (port: number, session = sessionId) => `${port}-${session}.localhost:${quiver.port}`;
const ticketFor = async (session: string, port: number, headers: Record<string, string> = { cookie: signedIn }) =>
  send(`/api/preview/ticket?session=${session}&port=${port}`, { method: "POST", headers });
const mint = async (session = sessionId, port = appPort) =>
  (JSON.parse((await ticketFor(session, port)).body) as { ticket: string }).ticket;

beforeAll(async () => {
  app = createServer((req, res) => res.end(`app ${req.url} cookie=${req.headers.cookie ?? "-"}`));
  await new Promise<void>((r) => app.listen(0, "127.0.0.1", () => r()));
  appPort = (app.address() as { port: number }).port;
  dataDir = await tempDir("quiver-ticket-");
  workspace = await tempDir("quiver-ticket-ws-");
  const env = testServerEnv(dataDir, { QUIVER_RUNNER_TOKEN: TEST_TOKEN });
  quiver = await startQuiver({ env, root, web: false, log: (l) => logs.push(l) });
  runner = spawnRunner({ url: `ws://127.0.0.1:${quiver.port}/runner`, workspace });
  await waitFor(() => quiver.services.runners.status().some((r) => r.connected), 20_000, "runner to connect");
  const trpc = createTRPCClient<AppRouter>({ links: [httpBatchLink({ url: `${quiver.url}/api/trpc` })] });
  sessionId = (await trpc.sessions.create.mutate({ title: "preview" })).id;
  otherSession = (await trpc.sessions.create.mutate({ title: "other" })).id;
  // A refused socket makes the server print the one-time sign-in URL; the owner opens it from afar.
  await new Promise<void>((resolve) => {
    const ws = new WebSocket(`ws://127.0.0.1:${quiver.port}/api/trpc`, { headers: AWAY });
    ws.once("unexpected-response", (_q, r) => (r.resume(), resolve()));
  });
  const url = new URL(
    logs
      .find((l) => l.includes("/signin?token="))!
      .split(" ")
      .pop()!,
  );
  signedIn = String((await send(url.pathname + url.search)).headers["set-cookie"]).split(";")[0];
}, 40_000);

afterAll(async () => {
  await runner?.stop();
  await quiver?.stop();
  app?.closeAllConnections();
  if (app) await new Promise((r) => app.close(r));
  for (const d of [dataDir, workspace]) if (d) rmSync(d, { recursive: true, force: true });
});

describe("preview tickets for an owner away from the server's machine", () => {
  it("refuses the preview host without a ticket, with a page that says how to get in", async () => {
    // The browser sends the preview host none of the IDE host's cookies (they are host-only).
    const r = await send("/", { host: hostOf(appPort) });
    expect(r.status).toBe(401);
    expect(r.body).toContain("Open this preview from the IDE");
    expect(r.body).toContain("Preview pane");
  });

  it("redeems a ticket for the host's own cookie, redirects to the clean URL, and serves the app through the runner", async () => {
    const ticket = await mint();
    const entered = await send(`/page?x=1&__quiver_ticket=${ticket}`, { host: hostOf(appPort) });
    expect(entered.status).toBe(303);
    expect(entered.headers.location).toBe(`http://${hostOf(appPort)}/page?x=1`);
    expect(entered.headers["referrer-policy"]).toBe("no-referrer");
    const set = String(entered.headers["set-cookie"]);
    expect(set).toMatch(/^quiver_preview=[^;]+; Path=\/; HttpOnly; Max-Age=43200; SameSite=None; Secure$/);
    const cookie = set.split(";")[0];
    const page = await send("/page?x=1", { host: hostOf(appPort), headers: { cookie: `${cookie}; theirs=1` } });
    expect(page.status).toBe(200);
    // The app sees its own cookies, never the preview's.
    expect(page.body).toBe("app /page?x=1 cookie=theirs=1");
    // The cookie opens this session's port only.
    expect((await send("/", { host: hostOf(appPort + 1), headers: { cookie } })).status).toBe(401);
    expect((await send("/", { host: hostOf(appPort, otherSession), headers: { cookie } })).status).toBe(401);
    // Used once; refused the second time.
    const again = await send(`/?__quiver_ticket=${ticket}`, { host: hostOf(appPort) });
    expect(again.status).toBe(403);
    expect(again.body).toContain("already used");
    // The app's hot-reload socket is let in by the cookie too (this app has none: 502, not 403).
    const upgrade = (headers: Record<string, string>) =>
      new Promise<number>((resolve) => {
        const ws = new WebSocket(`ws://127.0.0.1:${quiver.port}/hmr`, {
          headers: { host: hostOf(appPort), ...AWAY, ...headers },
        });
        ws.once("unexpected-response", (_q, r) => (r.resume(), resolve(r.statusCode ?? 0)));
        ws.once("open", () => (ws.close(), resolve(101)));
      });
    expect(await upgrade({})).toBe(403);
    expect(await upgrade({ cookie })).toBe(502);
  });

  it("refuses expired, forged and other-session or other-port tickets", async () => {
    const stale = createPreviewTickets({
      key: deriveKey(loadSecret(dataDir), "preview"),
      now: () => Date.now() - 61_000,
    }).mint(sessionId, appPort, null);
    const forged = (await mint()).replace(/.$/, (c) => (c === "A" ? "B" : "A"));
    const alien = createPreviewTickets({ key: deriveKey(Buffer.alloc(32, 7), "preview") }).mint(
      sessionId,
      appPort,
      null,
    );
    const cases: Array<[string, string, string]> = [
      [stale.ticket, hostOf(appPort), "has expired"],
      [forged, hostOf(appPort), "not valid"],
      [alien.ticket, hostOf(appPort), "not valid"],
      [await mint(), hostOf(appPort, otherSession), "another session or port"],
      [await mint(), hostOf(appPort + 1), "another session or port"],
    ];
    for (const [ticket, host, why] of cases) {
      const r = await send(`/?__quiver_ticket=${encodeURIComponent(ticket)}`, { host });
      expect(r.status, why).toBe(403);
      expect(r.body).toContain(why);
      expect(r.headers["set-cookie"]).toBeUndefined();
    }
  });

  it("mints tickets for the owner only, by POST, and opens a tab through a redirect", async () => {
    const ok = await ticketFor(sessionId, appPort);
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.body)).toMatchObject({ ticket: expect.any(String), expiresAt: expect.any(Number) });
    expect((await ticketFor(sessionId, appPort, {})).status).toBe(403);
    expect((await ticketFor("nosuchsession", appPort)).status).toBe(403);
    expect((await ticketFor(sessionId, 0)).status).toBe(400);
    expect(
      (await send(`/api/preview/ticket?session=${sessionId}&port=${appPort}`, { headers: { cookie: signedIn } }))
        .status,
    ).toBe(405);
    // A share view's request is never the owner's, from this machine either.
    const { token } = await createTRPCClient<AppRouter>({
      links: [httpBatchLink({ url: `${quiver.url}/api/trpc` })],
    }).shares.create.mutate({ sessionId });
    const view = String((await send(`/share/${token}`)).headers["set-cookie"]).split(";")[0];
    const marked = await fetch(`${quiver.url}/api/preview/ticket?session=${sessionId}&port=${appPort}`, {
      method: "POST",
      headers: { cookie: view, [SHARE_VIEW_HEADER]: "1" },
    });
    expect(marked.status).toBe(403);

    const open = await send(
      `/api/preview/open?session=${sessionId}&port=${appPort}&path=${encodeURIComponent("/a?b=1")}`,
      { host: `localhost:${quiver.port}`, headers: { cookie: signedIn } },
    );
    expect(open.status).toBe(303);
    const to = new URL(open.headers.location!);
    expect(to.host).toBe(hostOf(appPort));
    expect(to.pathname + to.searchParams.get("b")).toBe("/a1");
    const entered = await send(to.pathname + to.search, { host: to.host });
    expect(entered.headers.location).toBe(`http://${to.host}/a?b=1`);
    const page = await send("/a?b=1", {
      host: to.host,
      headers: { cookie: String(entered.headers["set-cookie"]).split(";")[0] },
    });
    expect(page.body).toBe("app /a?b=1 cookie=-");
    expect((await send(`/api/preview/open?session=${sessionId}&port=${appPort}`)).status).toBe(403);
  });

  it("keeps the clean URL on the preview host when the path reads as another host", async () => {
    // The app's page reports its own path (`//evil.example/x` is one) and the pane opens it in a tab.
    for (const path of ["//evil.example/x", "/\\evil.example/x", "/%2F/evil.example"]) {
      const entered = await send(`${path}?__quiver_ticket=${await mint()}`, { host: hostOf(appPort) });
      expect(entered.status).toBe(303);
      const to = new URL(entered.headers.location!, `http://${hostOf(appPort)}/start`);
      expect(to.host).toBe(hostOf(appPort));
    }
  });
});
