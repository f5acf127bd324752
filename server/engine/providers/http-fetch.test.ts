// The provider SDKs' fetch on node:http, against a real local HTTP server: what the request
// carries, a body read as it streams (not at its end), backpressure, cancel before and during
// the body, a connection cut mid-body (a retryable provider error), one refused and one that
// never answers.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { spawn } from "node:child_process";
import { connect, type AddressInfo, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { httpFetch, httpFetchWithin } from "./http-fetch";
import { toStreamError } from "./errors";

let server: Server;
let base: string;
let handle: (req: IncomingMessage, res: ServerResponse, body: string) => void;

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => handle(req, res, body));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const decoder = new TextDecoder();

describe("httpFetch", () => {
  it("sends the method, headers and body, and answers status, text and every header value", async () => {
    handle = (req, res, body) => {
      res.writeHead(201, "Made", {
        "content-type": "application/json",
        "set-cookie": ["a=1", "b=2"],
        "x-seen": `${req.method} ${req.headers["x-api-key"]} ${body}`,
      });
      res.end('{"ok":true}');
    };
    const res = await httpFetch(`${base}/v1/messages`, {
      method: "POST",
      headers: { "x-api-key": "k", "content-type": "application/json" },
      body: '{"q":1}',
    });
    expect([res.status, res.statusText, res.ok]).toEqual([201, "Made", true]);
    expect(res.headers.get("x-seen")).toBe('POST k {"q":1}');
    expect(res.headers.getSetCookie()).toEqual(["a=1", "b=2"]);
    expect(await res.json()).toEqual({ ok: true });
  });

  it("hands each chunk on as it arrives, before the response ends", async () => {
    let second!: () => void;
    handle = (_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("data: one\n\n");
      second = () => res.end("data: two\n\n");
    };
    const reader = (await httpFetch(base)).body!.getReader();
    expect(decoder.decode((await reader.read()).value)).toBe("data: one\n\n");
    second();
    expect(decoder.decode((await reader.read()).value)).toBe("data: two\n\n");
    expect((await reader.read()).done).toBe(true);
  });

  it("stops reading the socket while nobody reads the body, and loses nothing", async () => {
    let blocked = false;
    let written = 0;
    handle = (_req, res) => {
      res.writeHead(200);
      const chunk = "x".repeat(16 * 1024);
      const pump = () => {
        while (written < 2_000) {
          written++;
          if (!res.write(chunk)) {
            blocked = true;
            return void res.once("drain", pump);
          }
        }
        res.end();
      };
      pump();
    };
    const res = await httpFetch(base);
    await new Promise((r) => setTimeout(r, 200));
    // 32 MB offered; without backpressure all of it would be in memory by now.
    expect(blocked).toBe(true);
    expect(written).toBeLessThan(2_000);
    let bytes = 0;
    const reader = res.body!.getReader();
    for (let r = await reader.read(); !r.done; r = await reader.read()) bytes += r.value.byteLength;
    expect(bytes).toBe(2_000 * 16 * 1024);
  });

  it("cancels before the answer and in the middle of the body", async () => {
    const closed: Promise<void>[] = [];
    handle = (req, res) => {
      closed.push(new Promise((r) => res.on("close", () => r())));
      if (req.url === "/slow") return; // never answers
      res.writeHead(200);
      res.write("data: first\n\n");
    };
    const early = new AbortController();
    const pending = httpFetch(`${base}/slow`, { signal: early.signal });
    await new Promise((r) => setTimeout(r, 50));
    early.abort();
    await expect(pending).rejects.toMatchObject({ name: "AbortError" });

    const late = new AbortController();
    const reader = (await httpFetch(base, { signal: late.signal })).body!.getReader();
    await reader.read();
    const next = reader.read();
    late.abort();
    await expect(next).rejects.toMatchObject({ name: "AbortError" });
    // The server sees both connections go.
    await Promise.all(closed);
    await expect(httpFetch(base, { signal: AbortSignal.abort() })).rejects.toMatchObject({ name: "AbortError" });
  });

  it("turns a connection cut mid-body into a retryable provider error, and reports a refused one", async () => {
    handle = (_req, res) => {
      res.writeHead(200);
      res.write("data: partial");
      setTimeout(() => res.socket?.destroy(), 20);
    };
    const reader = (await httpFetch(base)).body!.getReader();
    await reader.read();
    const err = await reader.read().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(String(err)).toMatch(/terminated/);
    expect(toStreamError(err, "Anthropic")).toMatchObject({ code: "provider_unreachable", retryable: true });

    const idle = createServer();
    await new Promise<void>((r) => idle.listen(0, "127.0.0.1", r));
    const port = (idle.address() as AddressInfo).port;
    await new Promise((r) => idle.close(r));
    await expect(httpFetch(`http://127.0.0.1:${port}/`)).rejects.toMatchObject({ code: "ECONNREFUSED" });
  });

  it("gives up on a connection nobody answers after the connect timeout, not the SDK's ten minutes", async () => {
    // A socket that listens and never accepts, its queue filled: the kernel drops further SYNs,
    // as a firewall that drops packets does. (Node accepts by itself, so Python listens.)
    const py = spawn("python3", [
      "-c",
      "import socket,time\ns=socket.socket();s.bind(('127.0.0.1',0));s.listen(0);print(s.getsockname()[1],flush=True);time.sleep(60)",
    ]);
    const fillers: Socket[] = [];
    try {
      const port = Number(await new Promise<string>((r) => py.stdout.once("data", (d) => r(String(d).trim()))));
      for (let i = 0; i < 4; i++) fillers.push(connect(port, "127.0.0.1").on("error", () => undefined));
      await new Promise((r) => setTimeout(r, 200));
      const started = Date.now();
      const err = await httpFetchWithin({ connectTimeoutMs: 400 })(`http://127.0.0.1:${port}/v1/messages`).then(
        () => undefined,
        (e: unknown) => e as NodeJS.ErrnoException,
      );
      expect(err).toMatchObject({ code: "ETIMEDOUT", message: expect.stringMatching(/no answer in 0.4 s/) });
      expect(Date.now() - started).toBeLessThan(2_000);
    } finally {
      for (const f of fillers) f.destroy();
      py.kill();
    }
  });

  it("ends a body that goes silent after the idle timeout, as a retryable cut", async () => {
    handle = (_req, res) => {
      res.writeHead(200);
      res.write("data: one\n\n"); // and then nothing, with the connection open
    };
    const reader = (await httpFetchWithin({ idleTimeoutMs: 300 })(base)).body!.getReader();
    await reader.read();
    const started = Date.now();
    const err = await reader.read().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(String(err)).toMatch(/terminated: no data from 127\.0\.0\.1:\d+ for 0\.3 s/);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(toStreamError(err, "OpenAI-compatible")).toMatchObject({ code: "provider_unreachable", retryable: true });
  });

  it("refuses a body it cannot send", async () => {
    await expect(httpFetch(base, { method: "POST", body: new FormData() })).rejects.toThrow(/string or byte bodies/);
  });
});
