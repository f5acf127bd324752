// Who a request is when the browser holds a share link's viewer cookie, against the real server
// (port 0, SQLite, no runner) over real HTTP and WebSockets: only a request the share view marked
// uses the cookie. The owner (loopback or signed in) stays the owner in unmarked requests and is a
// viewer in marked ones; a stranger with the cookie is nobody unless marked; marking never adds.
// The page guard (Next itself is off here) runs on a real socket of its own, with the same key.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createServer, type Server } from "node:http";
import WebSocket from "ws";
import { createTRPCClient, httpBatchLink } from "@trpc/client";
import { testServerEnv } from "../testing/env";
import { startQuiver, type Quiver } from "../app";
import type { AppRouter } from "../api/root";
import { SHARE_VIEW_HEADER } from "../protocol/share-view";
import { ensureLocalActor } from "../services/local-user";
import { createAuth, type Auth } from ".";

const root = join(import.meta.dirname, "..", "..");
const PROXIED = { "x-forwarded-for": "203.0.113.7" };
const VIEW = { [SHARE_VIEW_HEADER]: "1" };

describe("a viewer cookie applies to the share view only", () => {
  let quiver: Quiver;
  let dataDir: string;
  const logs: string[] = [];
  let sessionId: string;
  let view: string; // the viewer cookie pair
  let signedIn: string; // the owner cookie pair (signed in "from another machine")
  let pages: Server;
  let pageAuth: Auth;
  let pagesUrl: string;

  const client = (headers: Record<string, string>) =>
    createTRPCClient<AppRouter>({ links: [httpBatchLink({ url: `${quiver.url}/api/trpc`, headers })] });
  const get = (base: string, path: string, headers: Record<string, string> = {}) =>
    fetch(`${base}${path}`, { headers, redirect: "manual" });
  const upgrade = (path: string, headers: Record<string, string>) =>
    new Promise<number>((resolve, reject) => {
      const ws = new WebSocket(`${quiver.url.replace("http", "ws")}${path}`, { headers });
      ws.once("open", () => (ws.close(), resolve(101)));
      ws.once("unexpected-response", (_req, res) => (res.resume(), resolve(res.statusCode ?? 0)));
      ws.once("error", reject);
    });

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "quiver-view-"));
    const env = testServerEnv(dataDir);
    quiver = await startQuiver({ env, root, web: false, log: (l) => logs.push(l) });
    const owner = client({});
    sessionId = (await owner.sessions.create.mutate({ title: "mine" })).id;
    const { token } = await owner.shares.create.mutate({ sessionId });
    view = (await get(quiver.url, `/share/${token}`)).headers.get("set-cookie")!.split(";")[0];
    // A refused stranger makes the server print the one-time sign-in URL.
    expect(await upgrade("/api/trpc", PROXIED)).toBe(401);
    const line = logs.find((l) => l.includes("/signin?token="))!;
    const url = new URL(line.split(" ").pop()!);
    signedIn = (await get(quiver.url, url.pathname + url.search, PROXIED)).headers.get("set-cookie")!.split(";")[0];
    // The page guard, on a socket of its own (same data folder: same cookie key).
    pageAuth = createAuth({
      env,
      owner: await ensureLocalActor(quiver.services.db),
      shares: quiver.services.shares,
      log: () => {},
    });
    pages = createServer((req, res) => pageAuth.guardPage(req, res, () => res.end("page")));
    await new Promise<void>((r) => pages.listen(0, "127.0.0.1", r));
    pagesUrl = `http://127.0.0.1:${(pages.address() as { port: number }).port}`;
  }, 40_000);
  afterAll(async () => {
    pageAuth?.dispose();
    if (pages) await new Promise((r) => pages.close(r));
    await quiver?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("keeps the owner the owner in unmarked requests, a viewer in marked ones", async () => {
    const owners: Array<[Record<string, string>, string]> = [
      [{}, view],
      [PROXIED, `${signedIn}; ${view}`],
    ];
    for (const [ownerHeaders, cookie] of owners) {
      const unmarked = client({ ...ownerHeaders, cookie });
      expect(await unmarked.auth.whoami.query()).toEqual({ kind: "member", userId: expect.any(String) });
      expect((await unmarked.sessions.list.query()).map((s) => s.id)).toContain(sessionId);
      const marked = client({ ...ownerHeaders, cookie, ...VIEW });
      expect(await marked.auth.whoami.query()).toEqual({ kind: "viewer", sessionId });
      await expect(marked.turns.send.mutate({ sessionId, text: "hi" })).rejects.toMatchObject({
        data: { code: "FORBIDDEN" },
      });
      expect(await upgrade("/api/trpc", { ...ownerHeaders, cookie })).toBe(101);
      expect(await upgrade("/api/trpc?shared=1", { ...ownerHeaders, cookie })).toBe(101);
      // The owner's terminal and preview work beside an opened link; the view's are refused.
      expect(await upgrade(`/terminal?session=${sessionId}&term=o1`, { ...ownerHeaders, cookie })).toBe(101);
      expect(await upgrade(`/terminal?session=${sessionId}&term=o1&shared=1`, { ...ownerHeaders, cookie })).toBe(403);
      // No runner here: past the access check, the owner hears that the runner is away.
      expect(
        (await get(quiver.url, `/api/preview/ports?session=${sessionId}`, { ...ownerHeaders, cookie })).status,
      ).toBe(502);
      expect(
        (await get(quiver.url, `/api/preview/ports?session=${sessionId}`, { ...ownerHeaders, cookie, ...VIEW })).status,
      ).toBe(403);
    }
  });

  it("gives a stranger with the cookie nothing unless marked, and a marked request without it nothing", async () => {
    const stranger = client({ ...PROXIED, cookie: view });
    expect(await stranger.auth.whoami.query()).toMatchObject({ kind: "refused", code: "UNAUTHORIZED" });
    await expect(stranger.sessions.get.query({ id: sessionId })).rejects.toMatchObject({
      data: { code: "UNAUTHORIZED" },
    });
    expect(await upgrade("/api/trpc", { ...PROXIED, cookie: view })).toBe(401);
    const viewer = client({ ...PROXIED, cookie: view, ...VIEW });
    expect((await viewer.sessions.get.query({ id: sessionId })).title).toBe("mine");
    await expect(viewer.sessions.list.query()).rejects.toMatchObject({ data: { code: "FORBIDDEN" } });
    // Marked without a link (or with a forged one) is refused, even from loopback: never the owner.
    for (const cookie of ["", view.replace(/.$/, (c) => (c === "A" ? "B" : "A"))]) {
      const nobody = client({ cookie, ...VIEW });
      await expect(nobody.sessions.list.query()).rejects.toMatchObject({
        data: { code: "FORBIDDEN" },
        message: expect.stringContaining("does not exist"),
      });
      expect(await upgrade("/api/trpc?shared=1", { cookie })).toBe(403);
    }
  });

  it("sends a link's holder who is not the owner to the share view, and lets the owner's pages be", async () => {
    const at = async (path: string, headers: Record<string, string>) => {
      const res = await get(pagesUrl, path, headers);
      return res.status === 303
        ? `303 ${res.headers.get("location")}`
        : `${res.status} ${await res.text().then((t) => (t === "page" ? t : "refused"))}`;
    };
    const toView = `303 /s/${sessionId}?shared=1`;
    expect(await at("/", { ...PROXIED, cookie: view })).toBe(toView);
    expect(await at(`/s/${sessionId}`, { ...PROXIED, cookie: view })).toBe(toView);
    expect(await at(`/s/${sessionId}?shared=1`, { ...PROXIED, cookie: view })).toBe("200 page");
    expect(await at("/_next/static/x.js", { ...PROXIED, cookie: view })).toBe("200 page");
    expect(await at("/", PROXIED)).toBe("401 refused");
    expect(await at("/", { cookie: view })).toBe("200 page");
    expect(await at(`/s/${sessionId}`, { cookie: view })).toBe("200 page");
    expect(await at(`/s/${sessionId}`, { ...PROXIED, cookie: `${signedIn}; ${view}` })).toBe("200 page");
  });
});
