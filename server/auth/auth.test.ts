// Signing in and share links against the real server (port 0, SQLite, a local runner), with
// real HTTP requests and real WebSockets: what a link's cookie opens, what it refuses (tRPC,
// the terminal socket, the preview), that revoking ends a live subscription and its socket,
// and that strangers (a proxied request) need the printed sign-in URL.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { request } from "node:http";
import WebSocket from "ws";
import { createTRPCClient, createWSClient, httpBatchLink, wsLink, type TRPCClient } from "@trpc/client";
import { parseEnv } from "../env";
import { startQuiver, type Quiver } from "../app";
import type { AppRouter } from "../api/root";
import { waitFor } from "../testing/runner";
import { SHARE_VIEW_HEADER } from "../protocol/share-view";

const root = join(import.meta.dirname, "..", "..");
const PROXIED = { "x-forwarded-for": "203.0.113.7" };
/** A share view's request (server/protocol/share-view.ts): only such a request uses the viewer cookie. */
const VIEW = { [SHARE_VIEW_HEADER]: "1" };

describe("sign-in and share links over real sockets", () => {
  let quiver: Quiver;
  let dataDir: string;
  const logs: string[] = [];
  let owner: TRPCClient<AppRouter>;
  let sessionId: string;

  const client = (headers: Record<string, string>) =>
    createTRPCClient<AppRouter>({ links: [httpBatchLink({ url: `${quiver.url}/api/trpc`, headers })] });
  const get = (path: string, headers: Record<string, string> = {}) =>
    fetch(`${quiver.url}${path}`, { headers, redirect: "manual" });
  /** Opens a link; answers the `name=value` cookie pair it set. */
  async function openLink(token: string): Promise<string> {
    const res = await get(`/share/${token}`);
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(`/s/${sessionId}?shared=1`);
    return res.headers.get("set-cookie")!.split(";")[0];
  }
  /** A GET with any Host (fetch will not set one): its status. */
  const rawGet = (path: string, headers: Record<string, string>) =>
    new Promise<number>((resolve, reject) => {
      request(`${quiver.url}${path}`, { headers }, (res) => (res.resume(), resolve(res.statusCode ?? 0)))
        .on("error", reject)
        .end();
    });
  /** A raw WebSocket upgrade: the HTTP status it was refused with, or 101. */
  const upgrade = (path: string, headers: Record<string, string>, host?: string) =>
    new Promise<number>((resolve, reject) => {
      const ws = new WebSocket(`${quiver.url.replace("http", "ws")}${path}`, {
        headers: host ? { ...headers, host } : headers,
      });
      ws.once("open", () => (ws.close(), resolve(101)));
      ws.once("unexpected-response", (_req, res) => (res.resume(), resolve(res.statusCode ?? 0)));
      ws.once("error", reject);
    });

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "quiver-auth-"));
    const env = parseEnv({ PORT: "0", QUIVER_DATA_DIR: dataDir, QUIVER_SANDBOX: "off" });
    quiver = await startQuiver({ env, root, web: false, log: (l) => logs.push(l) });
    owner = client({});
    sessionId = (await owner.sessions.create.mutate({ title: "shared" })).id;
    await waitFor(() => quiver.services.runners.status().some((r) => r.connected), 20_000, "local runner");
  }, 40_000);
  afterAll(async () => {
    await quiver?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("opens a link as a viewer of that session only, from loopback too", async () => {
    const { token } = await owner.shares.create.mutate({ sessionId });
    const cookie = await openLink(token);
    const set = (await get(`/share/${token}`, { "x-forwarded-proto": "https" })).headers.get("set-cookie")!;
    expect(set).toMatch(/^__Host-quiver_view=[^;]+; HttpOnly; SameSite=Lax; Max-Age=\d+; Path=\/; Secure$/);
    const viewer = client({ cookie, ...VIEW });
    expect(await viewer.auth.whoami.query()).toEqual({ kind: "viewer", sessionId });
    expect((await viewer.sessions.get.query({ id: sessionId })).title).toBe("shared");
    await expect(viewer.turns.send.mutate({ sessionId, text: "hi" })).rejects.toMatchObject({
      data: { code: "FORBIDDEN" },
    });
    await expect(viewer.sessions.list.query()).rejects.toMatchObject({ data: { code: "FORBIDDEN" } });
    await expect(viewer.shares.create.mutate({ sessionId })).rejects.toMatchObject({ data: { code: "FORBIDDEN" } });
    // Owner-only sockets and the preview refuse the viewer; the owner gets through.
    expect(await upgrade(`/terminal?session=${sessionId}&term=t1&shared=1`, { cookie })).toBe(403);
    expect(await upgrade(`/terminal?session=${sessionId}&term=t1`, {})).toBe(101);
    expect((await get(`/api/preview/ports?session=${sessionId}`, { cookie, ...VIEW })).status).toBe(403);
    expect((await get(`/api/preview/ports?session=${sessionId}`)).status).toBe(200);
    const previewHost = `8000-${sessionId}.localhost:${quiver.port}`;
    expect(await rawGet("/", { cookie, ...VIEW, host: previewHost })).toBe(401);
    expect(await upgrade("/", { cookie, ...VIEW }, previewHost)).toBe(403);
  });

  it("ends a viewer's live subscription and socket when its link is revoked, then refuses it", async () => {
    const link = await owner.shares.create.mutate({ sessionId });
    const cookie = await openLink(link.token);
    const closes: number[] = [];
    class CookieSocket extends WebSocket {
      constructor(url: string, protocols?: string | string[]) {
        super(`${url}?shared=1`, protocols, { headers: { cookie } });
        this.on("close", (code) => closes.push(code));
      }
    }
    const ws = createWSClient({
      url: `${quiver.url.replace("http", "ws")}/api/trpc`,
      WebSocket: CookieSocket as never,
      retryDelayMs: () => 60_000,
    });
    try {
      const viewer = createTRPCClient<AppRouter>({ links: [wsLink({ client: ws })] });
      const texts: string[] = [];
      const ended = new Promise<Error>((resolve) => {
        viewer.turns.events.subscribe(
          { sessionId },
          {
            onData: (d) => {
              const ev = (d as { data: { type: string; text?: string } }).data;
              if (ev.type === "notice") texts.push(ev.text!);
            },
            onError: resolve,
          },
        );
      });
      await quiver.services.hub.publish(sessionId, { type: "notice", level: "info", code: "t", text: "before" });
      await waitFor(() => texts.includes("before"), 5_000, "the live event");
      await owner.shares.revoke.mutate({ linkId: link.id });
      const err = await ended;
      expect(err.message).toBe("This share link was revoked. Ask the session's owner for a new one.");
      await waitFor(() => closes.includes(4403), 5_000, "the socket to close");
    } finally {
      ws.close();
    }
    expect(await upgrade("/api/trpc?shared=1", { cookie })).toBe(403);
    // Revoked is refused, never quietly the loopback owner.
    await expect(client({ cookie, ...VIEW }).sessions.list.query()).rejects.toMatchObject({
      data: { code: "FORBIDDEN" },
    });
    expect((await get(`/share/${link.token}`)).status).toBe(410);
    const leave = await get("/share/leave", { cookie });
    expect(leave.headers.get("set-cookie")).toMatch(/^quiver_view=; .*Max-Age=0/);
  });

  it("answers unknown and expired links with a clear page", async () => {
    const res = await get(`/share/${"x".repeat(22)}`);
    expect(res.status).toBe(404);
    expect(await res.text()).toContain("This share link does not exist");
    const link = await owner.shares.create.mutate({ sessionId, expiresInMinutes: 5 });
    await quiver.services.db.shareLink.update({
      where: { id: link.id },
      data: { expiresAt: new Date(Date.now() - 1000) },
    });
    const expired = await get(`/share/${link.token}`);
    expect(expired.status).toBe(410);
    expect(await expired.text()).toContain("has expired");
  });

  it("makes strangers sign in with the printed one-time URL", async () => {
    const stranger = client(PROXIED);
    await expect(stranger.sessions.list.query()).rejects.toMatchObject({
      data: { code: "UNAUTHORIZED" },
      message: expect.stringContaining("signin?token="),
    });
    expect(await upgrade("/api/trpc", PROXIED)).toBe(401);
    expect(await upgrade(`/terminal?session=${sessionId}&term=t2`, PROXIED)).toBe(401);
    // Right after the owner's own check passed: the answer is per request, not per session.
    expect((await get(`/api/preview/ports?session=${sessionId}`)).status).toBe(200);
    expect((await get(`/api/preview/ports?session=${sessionId}`, PROXIED)).status).toBe(403);
    expect(await rawGet("/", { ...PROXIED, host: `8000-${sessionId}.localhost:${quiver.port}` })).toBe(401);
    const line = logs.find((l) => l.includes("/signin?token="));
    expect(line).toBeDefined();
    const path = new URL(line!.split(" ").pop()!).pathname + new URL(line!.split(" ").pop()!).search;
    expect((await get("/signin?token=wrong", PROXIED)).status).toBe(401);
    const signIn = await get(path, PROXIED);
    expect(signIn.status).toBe(303);
    const cookie = signIn.headers.get("set-cookie")!;
    expect(cookie).toMatch(/^quiver_owner=[^;]+; Path=\/; HttpOnly; SameSite=Lax; Max-Age=2592000$/);
    const signedIn = client({ ...PROXIED, cookie: cookie.split(";")[0] });
    expect((await signedIn.sessions.list.query()).map((s) => s.id)).toContain(sessionId);
    expect(await upgrade("/api/trpc", { ...PROXIED, cookie: cookie.split(";")[0] })).toBe(101);
    // The URL worked once; a forged cookie is nobody.
    expect((await get(path, PROXIED)).status).toBe(401);
    const forged = cookie.split(";")[0].replace(/.$/, (c) => (c === "A" ? "B" : "A"));
    await expect(client({ ...PROXIED, cookie: forged }).sessions.list.query()).rejects.toMatchObject({
      data: { code: "UNAUTHORIZED" },
    });
  });
});
