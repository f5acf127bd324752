// The live preview end to end below the browser: the whole server (port 0, no web app), a real
// runner process on a temp workspace, and an app server in this test process on a real port.
// Requests reach the preview host as a browser's would: to the server's address with a Host of
// `<port>-<session>.localhost`.
import { createServer, request, type IncomingMessage, type Server } from "node:http";
import { spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { rmSync } from "node:fs";
import { join } from "node:path";
import WebSocket, { WebSocketServer } from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTRPCClient, httpBatchLink } from "@trpc/client";
import { testServerEnv } from "../testing/env";
import { startQuiver, type Quiver } from "../app";
import type { AppRouter } from "../api/root";
import { spawnRunner, tempDir, TEST_TOKEN, waitFor, type RunnerChild } from "../testing/runner";

const root = join(import.meta.dirname, "../..");
const BIG = 5 * 1024 * 1024;

let quiver: Quiver;
let runner: RunnerChild;
let app: Server;
let appPort: number;
let sessionId: string;
let workspace: string;
let dataDir: string;
const appEvents: string[] = [];

interface Reply {
  status: number;
  headers: IncomingMessage["headers"];
  body: Buffer;
  chunks: number;
}

const previewHost = () => `${appPort}-${sessionId}.localhost:${quiver.port}`;

function get(
  path: string,
  o: {
    port?: number;
    session?: string;
    method?: string;
    body?: Buffer;
    headers?: Record<string, string>;
    host?: string;
  } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const host = o.host ?? `${o.port ?? appPort}-${o.session ?? sessionId}.localhost:${quiver.port}`;
    const req = request(
      { host: "127.0.0.1", port: quiver.port, path, method: o.method ?? "GET", headers: { host, ...o.headers } },
      (res) => {
        const parts: Buffer[] = [];
        res.on("data", (c: Buffer) => parts.push(c));
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(parts),
            chunks: parts.length,
          }),
        );
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(o.body);
  });
}

beforeAll(async () => {
  app = createServer((req, res) => {
    if (req.url === "/") {
      res.setHeader("set-cookie", ["a=1", "b=2"]);
      res.writeHead(200, { "content-type": "text/html", "x-app": "yes" });
      res.end(`<a href="/next">next</a> host=${req.headers.host} origin=${req.headers.origin ?? "-"}`);
    } else if (req.url === "/toss") {
      // Cookies aimed at the IDE's host and every other preview under it, in several spellings.
      res.setHeader("set-cookie", [
        "quiver.session_token=evil; Domain=localhost; Path=/",
        "quiver_owner=x; path=/api; DOMAIN=.localhost; HttpOnly",
        "quiver_view=y;domain =localhost;Secure",
        "c=domain=localhost; Max-Age=60;\tDomain\t=\tlocalhost",
        "keep=1; Path=/",
      ]);
      res.writeHead(200).end("tossed");
    } else if (req.url === "/redirect") {
      res.writeHead(302, { location: `http://127.0.0.1:${appPort}/next?x=1` }).end();
    } else if (req.url === "/big") {
      res.writeHead(200, { "content-type": "application/octet-stream" });
      const block = Buffer.alloc(128 * 1024);
      let i = 0;
      const pump = () => {
        while (i < BIG / block.length) {
          block.fill(i % 251);
          i++;
          if (!res.write(Buffer.from(block))) return void res.once("drain", pump);
        }
        res.end();
      };
      pump();
    } else if (req.url === "/endless") {
      res.writeHead(200, { "content-type": "text/event-stream" });
      const t = setInterval(() => res.write("data: tick\n\n"), 20);
      res.on("close", () => {
        clearInterval(t);
        appEvents.push("endless closed");
      });
    } else if (req.url === "/echo" && req.method === "POST") {
      const hash = createHash("sha256");
      let n = 0;
      req.on("data", (c: Buffer) => {
        hash.update(c);
        n += c.length;
      });
      req.on("end", () => res.writeHead(200).end(`${n} ${hash.digest("hex")}`));
    } else if (req.url === "/doc") {
      const page = `<!doctype html><title>doc</title><p>accept-encoding=${req.headers["accept-encoding"] ?? "-"}</p>`;
      res
        .writeHead(200, { "content-type": "text/html; charset=utf-8", "content-length": Buffer.byteLength(page) })
        .end(page);
    } else res.writeHead(404).end("app 404");
  });
  const hmr = new WebSocketServer({ noServer: true, handleProtocols: (p) => (p.has("vite-hmr") ? "vite-hmr" : false) });
  app.on("upgrade", (req, socket, head) => {
    if (req.url !== "/hmr") return void socket.end("HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n");
    hmr.handleUpgrade(req, socket, head, (ws) => {
      ws.send(`hello ${req.headers.origin}`);
      ws.on("message", (data, binary) => ws.send(data, { binary }));
    });
  });
  await new Promise<void>((r) => app.listen(0, "127.0.0.1", () => r()));
  appPort = (app.address() as { port: number }).port;

  dataDir = await tempDir("quiver-preview-");
  workspace = await tempDir("quiver-preview-ws-");
  const env = testServerEnv(dataDir, { QUIVER_RUNNER_TOKEN: TEST_TOKEN });
  quiver = await startQuiver({ env, root, web: false, log: () => {} });
  runner = spawnRunner({ url: `ws://127.0.0.1:${quiver.port}/runner`, workspace });
  await waitFor(() => quiver.services.runners.status().some((r) => r.connected), 20_000, "runner to connect");
  const trpc = createTRPCClient<AppRouter>({ links: [httpBatchLink({ url: `${quiver.url}/api/trpc` })] });
  sessionId = (await trpc.sessions.create.mutate({ title: "preview" })).id;
});

afterAll(async () => {
  await runner?.stop();
  await quiver?.stop();
  app?.closeAllConnections();
  await new Promise((r) => app?.close(r));
  for (const d of [dataDir, workspace]) if (d) rmSync(d, { recursive: true, force: true });
});

describe("preview through the server and a real runner", () => {
  it("serves the app's page with its status and headers, rewriting Host for the dev server", async () => {
    const r = await get("/", { headers: { connection: "keep-alive, x-drop", "x-drop": "1" } });
    expect(r.status).toBe(200);
    expect(r.headers["x-app"]).toBe("yes");
    expect(r.headers["set-cookie"]).toEqual(["a=1", "b=2"]);
    expect(r.body.toString()).toBe(`<a href="/next">next</a> host=localhost:${appPort} origin=-`);
  });

  it("keeps the app's cookies on its preview host: no Domain reaches the browser", async () => {
    const r = await get("/toss");
    expect(r.status).toBe(200);
    expect(r.headers["set-cookie"]).toEqual([
      "quiver.session_token=evil; Path=/",
      "quiver_owner=x; path=/api; HttpOnly",
      "quiver_view=y;Secure",
      "c=domain=localhost; Max-Age=60",
      "keep=1; Path=/",
    ]);
  });

  it("keeps the IDE out of other origins' frames, and leaves the app's own answers as they are", async () => {
    // The IDE's host (a page, tRPC, an unknown path): only the IDE itself may frame it.
    for (const path of ["/", "/s/x", "/api/health", "/api/trpc/sessions.list"]) {
      const r = await get(path, { host: `localhost:${quiver.port}` });
      expect(r.headers["content-security-policy"], path).toContain("frame-ancestors 'self'");
      expect(r.headers["content-security-policy"], path).toContain("img-src 'self' data: blob:");
      expect(r.headers["x-frame-options"], path).toBe("SAMEORIGIN");
    }
    const app = await get("/");
    expect(app.headers["content-security-policy"]).toBeUndefined();
    expect(app.headers["x-frame-options"]).toBeUndefined();
  });

  it("lets another site's page open the app but not load from it (a script, an image, a fetch)", async () => {
    // Another session's app, or any site that knows the name, as the browser marks its requests.
    for (const site of ["cross-site", "same-site", "CROSS-SITE"]) {
      for (const mode of ["no-cors", "cors", "websocket", "same-origin"]) {
        const r = await get("/", { headers: { "sec-fetch-site": site, "sec-fetch-mode": mode } });
        expect(r.status, `${site} ${mode}`).toBe(403);
        expect(r.body.toString()).not.toContain("host=localhost");
      }
    }
    // The IDE frames it (a navigation); the app loads its own; a browser without Fetch Metadata.
    const allowed: Record<string, string>[] = [
      { "sec-fetch-site": "cross-site", "sec-fetch-mode": "navigate", "sec-fetch-dest": "iframe" },
      { "sec-fetch-site": "same-origin", "sec-fetch-mode": "cors" },
      { "sec-fetch-site": "none", "sec-fetch-mode": "navigate" },
      {},
    ];
    for (const headers of allowed) expect((await get("/", { headers })).status, JSON.stringify(headers)).toBe(200);
  });

  it("adds the location script to pages the frame navigates to, and only to those", async () => {
    const nav = await get("/doc", { headers: { "sec-fetch-dest": "iframe", "accept-encoding": "gzip, br" } });
    expect(nav.status).toBe(200);
    const body = nav.body.toString();
    expect(body).toMatch(
      /^<!doctype html><script data-quiver-preview>.*quiver\.preview\.location.*<\/script><title>doc<\/title>/,
    );
    // The app was asked for bytes it can be read in, and the grown body is not cut at the old length.
    expect(body.endsWith("<p>accept-encoding=identity</p>")).toBe(true);
    expect(nav.headers["content-length"]).toBeUndefined();
    // A fetch of the same page by the app's own scripts gets it as the app sent it.
    const fetched = await get("/doc", { headers: { "sec-fetch-dest": "empty", "accept-encoding": "gzip" } });
    expect(fetched.body.toString()).toBe("<!doctype html><title>doc</title><p>accept-encoding=gzip</p>");
    expect(fetched.headers["content-length"]).toBe(String(fetched.body.length));
    // Not HTML: untouched, navigation or not.
    expect((await get("/big", { headers: { "sec-fetch-dest": "document" } })).body.length).toBe(BIG);
  });

  it("moves a redirect to the app's own loopback address back onto the preview host", async () => {
    const r = await get("/redirect");
    expect(r.status).toBe(302);
    expect(r.headers.location).toBe(`http://${appPort}-${sessionId}.localhost:${quiver.port}/next?x=1`);
  });

  it("streams a 5 MB body in chunks, intact", async () => {
    const r = await get("/big");
    expect(r.status).toBe(200);
    expect(r.body.length).toBe(BIG);
    expect(r.chunks).toBeGreaterThan(10);
    for (let i = 0; i < BIG / (128 * 1024); i++) expect(r.body[i * 128 * 1024 + 5]).toBe(i % 251);
  });

  it("forwards a 3 MB POST body", async () => {
    const body = Buffer.alloc(3 * 1024 * 1024);
    for (let i = 0; i < body.length; i++) body[i] = (i * 7) % 256;
    const r = await get("/echo", {
      method: "POST",
      body,
      headers: {
        "content-type": "application/octet-stream",
        origin: `http://${appPort}-${sessionId}.localhost:${quiver.port}`,
      },
    });
    expect(r.status).toBe(200);
    expect(r.body.toString()).toBe(`${body.length} ${createHash("sha256").update(body).digest("hex")}`);
  });

  it("answers a dead port with a clear 502 page", async () => {
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, "127.0.0.1", () => r()));
    const dead = (probe.address() as { port: number }).port;
    await new Promise((r) => probe.close(r));
    const r = await get("/", { port: dead });
    expect(r.status).toBe(502);
    expect(r.headers["x-quiver-preview-error"]).toBe("refused");
    expect(r.body.toString()).toContain(`Nothing listens on port ${dead} yet`);
  });

  it("cancels the runner's upstream request when the browser goes away", async () => {
    await new Promise<void>((resolve, reject) => {
      const req = request(
        {
          host: "127.0.0.1",
          port: quiver.port,
          path: "/endless",
          headers: { host: `${appPort}-${sessionId}.localhost:${quiver.port}` },
        },
        (res) => {
          res.once("data", () => {
            req.destroy();
            resolve();
          });
        },
      );
      req.on("error", (e) => (e.message.includes("socket hang up") ? undefined : reject(e)));
      req.end();
    });
    await waitFor(() => appEvents.includes("endless closed"), 10_000, "the app to see its response closed");
    await waitFor(() => quiver.services.runners.preview.size === 0, 5_000, "the stream to be dropped");
  });

  it("refuses a session that does not exist, a foreign base host and a cross-site post", async () => {
    expect((await get("/", { session: "nosuchsession" })).status).toBe(403);
    expect((await get("/", { host: `${appPort}-${sessionId}.attacker.example` })).status).toBe(403);
    const post = await get("/echo", {
      method: "POST",
      body: Buffer.from("x"),
      headers: { origin: "http://attacker.example" },
    });
    expect(post.status).toBe(403);
  });

  it("keeps Quiver's own routes and sockets off the preview host", async () => {
    // On a preview host /api/health is the app's path, not Quiver's, and so is /api/trpc's socket.
    expect((await get("/api/health")).body.toString()).toBe("app 404");
    // The share view's `?shared=1` mark is Quiver's own: on a preview host it is the app's query.
    expect((await get("/?shared=1")).body.toString()).toBe("app 404");
    const upgrade = await new Promise<{ status: number; body: string }>((resolve) => {
      const ws = new WebSocket(`ws://127.0.0.1:${quiver.port}/api/trpc`, { headers: { host: previewHost() } });
      ws.on("unexpected-response", (_req, res) => {
        let body = "";
        res.on("data", (c: Buffer) => (body += c.toString()));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      });
      ws.on("open", () => resolve({ status: 101, body: "" }));
    });
    expect(upgrade.status).toBe(502);
    expect(upgrade.body).toContain(`port ${appPort} answered the WebSocket upgrade with HTTP 404`);
  });

  it("relays a WebSocket (hot reload) with its subprotocol, both ways, and refuses a foreign origin", async () => {
    const origin = `http://${previewHost()}`;
    const ws = new WebSocket(`ws://127.0.0.1:${quiver.port}/hmr`, ["vite-hmr"], {
      headers: { host: previewHost(), origin },
    });
    const messages: string[] = [];
    ws.on("message", (d: Buffer) => messages.push(d.toString()));
    await new Promise((r, j) => (ws.once("open", r), ws.once("error", j)));
    expect(ws.protocol).toBe("vite-hmr");
    ws.send("ping");
    await waitFor(() => messages.length === 2, 5_000, "echo");
    // The app sees the Origin a local dev server expects.
    expect(messages).toEqual([`hello http://localhost:${appPort}`, "ping"]);
    await waitFor(() => quiver.services.runners.preview.size === 1, 5_000, "one open socket");
    ws.close();
    await waitFor(() => quiver.services.runners.preview.size === 0, 5_000, "the socket to be closed on the runner");

    const foreign = await new Promise<number>((resolve) => {
      const bad = new WebSocket(`ws://127.0.0.1:${quiver.port}/hmr`, {
        headers: { host: previewHost(), origin: "http://attacker.example" },
      });
      bad.on("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
      bad.on("open", () => resolve(101));
    });
    expect(foreign).toBe(403);
  });

  it("lists a port a process of the workspace listens on", async () => {
    let child: ChildProcess | undefined;
    try {
      child = spawn(
        process.execPath,
        [
          "-e",
          "const s=require('http').createServer((q,r)=>r.end('ok')).listen(0,'127.0.0.1',()=>console.log(s.address().port))",
        ],
        { cwd: workspace, stdio: ["ignore", "pipe", "inherit"] },
      );
      const port = await new Promise<number>((resolve) =>
        child!.stdout!.once("data", (d: Buffer) => resolve(Number(d.toString().trim()))),
      );
      const res = await fetch(`${quiver.url}/api/preview/ports?session=${sessionId}`);
      expect(res.status).toBe(200);
      const body = (await res.json()) as { ports: Array<{ port: number; workspace: boolean }> };
      expect(body.ports.find((p) => p.port === port)).toMatchObject({ port, workspace: true });
      // The server's own port is not the person's app.
      expect(body.ports.some((p) => p.port === quiver.port)).toBe(false);
      expect((await fetch(`${quiver.url}/api/preview/ports?session=nosuchsession`)).status).toBe(403);
    } finally {
      child?.kill("SIGKILL");
    }
  });
});
