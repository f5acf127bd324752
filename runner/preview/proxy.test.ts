// The runner's preview proxy against a real HTTP server on a real port: the frames it sends are
// collected as the server would receive them, and acknowledged only when the test says so, so
// the flow-control window is observable.
import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeFrame, ServerToRunner } from "../../server/protocol/runner";
import { PREVIEW_WINDOW, type PreviewRunnerFrame, type PreviewServerFrame } from "../../server/protocol/preview";
import { PreviewProxy } from "./proxy";

const BIG = 5 * 1024 * 1024;
let server: Server;
let port: number;
let posted: Buffer[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === "/hello") {
      res.setHeader("set-cookie", ["a=1", "b=2"]);
      res.setHeader("x-app", "yes");
      res.setHeader("connection", "keep-alive, x-secret");
      res.setHeader("x-secret", "hop");
      res.writeHead(201, { "content-type": "text/plain" });
      res.end(`hi ${req.headers.host} ${req.headers["x-sent"]} ${req.headers["keep-alive"] ?? "no-keepalive"}`);
    } else if (req.url === "/big") {
      res.writeHead(200, { "content-type": "application/octet-stream" });
      const block = Buffer.alloc(256 * 1024, 7);
      let left = BIG / block.length;
      const pump = () => {
        while (left > 0) {
          left--;
          if (!res.write(block)) return void res.once("drain", pump);
        }
        res.end();
      };
      pump();
    } else if (req.url === "/echo" && req.method === "POST") {
      const parts: Buffer[] = [];
      req.on("data", (c: Buffer) => parts.push(c));
      req.on("end", () => {
        posted = parts;
        res.writeHead(200).end(`got ${Buffer.concat(parts).length} bytes`);
      });
    } else res.writeHead(404).end("no");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  port = (server.address() as { port: number }).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

function harness(autoAck = true) {
  const frames: PreviewRunnerFrame[] = [];
  const waiters: Array<() => void> = [];
  const proxy: PreviewProxy = new PreviewProxy({
    send: (f) => {
      frames.push(f);
      if (autoAck && f.type === "preview.data")
        queueMicrotask(() =>
          proxy.handle({ type: "preview.ack", streamId: f.streamId, bytes: Buffer.from(f.data, "base64").length }),
        );
      for (const w of waiters.splice(0)) w();
      return true;
    },
  });
  const until = async (check: () => boolean, ms = 10_000) => {
    const end = Date.now() + ms;
    while (!check()) {
      if (Date.now() > end) throw new Error("timed out");
      await new Promise<void>((r) => {
        waiters.push(r);
        setTimeout(r, 20);
      });
    }
  };
  const ended = (id: string) =>
    frames.find((f) => f.type === "preview.end" && f.streamId === id) as
      Extract<PreviewRunnerFrame, { type: "preview.end" }> | undefined;
  const body = (id: string) =>
    Buffer.concat(
      frames
        .filter((f) => f.type === "preview.data" && f.streamId === id)
        .map((f) => Buffer.from((f as { data: string }).data, "base64")),
    );
  const request = (f: Partial<Extract<PreviewServerFrame, { type: "preview.request" }>> & { streamId: string }) =>
    proxy.handle({
      type: "preview.request",
      sessionId: "s1",
      port,
      method: "GET",
      path: "/",
      headers: [],
      hasBody: false,
      deadline: Date.now() + 20_000,
      ...f,
    });
  return { frames, proxy, until, ended, body, request };
}

describe("preview proxy (runner side)", () => {
  it("forwards status, end-to-end headers and the body; hop-by-hop headers go nowhere", async () => {
    const h = harness();
    h.request({
      streamId: "a",
      path: "/hello",
      headers: [
        ["Host", `localhost:${port}`],
        ["X-Sent", "v1"],
        ["Keep-Alive", "timeout=5"],
      ],
    });
    await h.until(() => !!h.ended("a"));
    const head = h.frames.find((f) => f.type === "preview.head") as Extract<
      PreviewRunnerFrame,
      { type: "preview.head" }
    >;
    expect(head.status).toBe(201);
    const names = head.headers.map(([k]) => k.toLowerCase());
    expect(head.headers.filter(([k]) => k.toLowerCase() === "set-cookie").map(([, v]) => v)).toEqual(["a=1", "b=2"]);
    expect(names).toContain("x-app");
    expect(names).not.toContain("connection");
    expect(names).not.toContain("x-secret"); // named by the app's Connection header
    expect(h.body("a").toString()).toBe(`hi localhost:${port} v1 no-keepalive`);
    expect(h.ended("a")?.error).toBeUndefined();
    expect(h.proxy.size).toBe(0);
  });

  it("streams a 5 MB body in chunks and stops at the window until the server acknowledges", async () => {
    const h = harness(false);
    h.request({ streamId: "big", path: "/big" });
    await h.until(() => h.body("big").length >= PREVIEW_WINDOW);
    await new Promise((r) => setTimeout(r, 300));
    // Unacknowledged, the proxy holds at about one window (one socket read may overshoot it).
    const held = h.body("big").length;
    expect(held).toBeLessThan(PREVIEW_WINDOW + 512 * 1024);
    expect(h.ended("big")).toBeUndefined();
    let acked = 0;
    while (!h.ended("big")) {
      const got = h.body("big").length;
      if (got > acked) {
        h.proxy.handle({ type: "preview.ack", streamId: "big", bytes: got - acked });
        acked = got;
      }
      await h.until(() => h.body("big").length > acked || !!h.ended("big"));
    }
    const data = h.frames.filter((f) => f.type === "preview.data");
    expect(h.body("big").length).toBe(BIG);
    expect(data.length).toBeGreaterThanOrEqual(BIG / (64 * 1024));
    expect(h.body("big").every((b) => b === 7)).toBe(true);
  });

  it("forwards a POST body sent in several chunks and acknowledges what it wrote", async () => {
    const h = harness();
    const a = Buffer.alloc(100_000, 1);
    const b = Buffer.alloc(50_000, 2);
    h.request({
      streamId: "p",
      method: "POST",
      path: "/echo",
      hasBody: true,
      headers: [["content-length", String(a.length + b.length)]],
    });
    h.proxy.handle({ type: "preview.body", streamId: "p", data: a.subarray(0, 60_000).toString("base64"), end: false });
    h.proxy.handle({ type: "preview.body", streamId: "p", data: a.subarray(60_000).toString("base64"), end: false });
    h.proxy.handle({ type: "preview.body", streamId: "p", data: b.toString("base64"), end: true });
    await h.until(() => !!h.ended("p"));
    expect(h.body("p").toString()).toBe("got 150000 bytes");
    expect(Buffer.concat(posted).equals(Buffer.concat([a, b]))).toBe(true);
    const acks = h.frames
      .filter((f) => f.type === "preview.ack")
      .reduce((n, f) => n + (f as { bytes: number }).bytes, 0);
    expect(acks).toBe(150_000);
  });

  it("answers a dead port with a clear refusal", async () => {
    const dead = createServer();
    await new Promise<void>((r) => dead.listen(0, "127.0.0.1", () => r()));
    const deadPort = (dead.address() as { port: number }).port;
    await new Promise((r) => dead.close(r));
    const h = harness();
    h.request({ streamId: "d", port: deadPort });
    await h.until(() => !!h.ended("d"));
    expect(h.ended("d")?.error).toEqual({
      code: "refused",
      message: `nothing listens on port ${deadPort} on the runner's machine`,
    });
    expect(h.frames.some((f) => f.type === "preview.head")).toBe(false);
  });

  it("fails one request with headers Node will not send, and keeps serving", async () => {
    const h = harness();
    h.request({
      streamId: "bad",
      path: "/hello",
      headers: [
        ["bad name", "x"],
        ["x-ok", "line\nbreak"],
      ],
    });
    await h.until(() => !!h.ended("bad"));
    expect(h.ended("bad")?.error?.code).toBe("invalid");
    h.request({ streamId: "good", path: "/hello" });
    await h.until(() => !!h.ended("good"));
    expect(h.ended("good")?.error).toBeUndefined();
  });

  it("cancels upstream when the server says the browser went away", async () => {
    const h = harness(false);
    h.request({ streamId: "c", path: "/big" });
    await h.until(() => h.body("c").length > 0);
    h.proxy.handle({ type: "preview.cancel", streamId: "c" });
    expect(h.proxy.size).toBe(0);
  });

  it("refuses frames that would reach another host: absolute-form paths, CONNECT, no port", () => {
    const base = {
      type: "preview.request",
      streamId: "x",
      sessionId: "s",
      port,
      method: "GET",
      path: "/",
      headers: [],
      hasBody: false,
      deadline: Date.now() + 1000,
    };
    expect(decodeFrame(ServerToRunner, JSON.stringify(base)).ok).toBe(true);
    for (const bad of [
      { ...base, path: "http://10.0.0.1/" },
      { ...base, path: "evil.example:80" },
      { ...base, path: "/a b" },
      { ...base, method: "CONNECT", path: "/" },
      { ...base, port: 0 },
      { ...base, port: 70_000 },
    ]) {
      expect(decodeFrame(ServerToRunner, JSON.stringify(bad)).ok, JSON.stringify(bad)).toBe(false);
    }
    // A host in the frame is not a field the runner reads: it still goes to loopback.
    const withHost = decodeFrame(ServerToRunner, JSON.stringify({ ...base, host: "10.0.0.1" }));
    expect(withHost.ok && "host" in withHost.message).toBe(false);
  });
});
