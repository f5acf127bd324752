// A body sent to /api/trpc by someone who may call nothing with one is refused before it is
// read, and its connection closed: a stranger holding large bodies open on many connections
// made the server hold each one whole (64 MiB apiece). (A body over CALL_BODY_MAX is refused by
// tRPC's own bound: server/api/closing-sockets.test.ts.) The real server with accounts on, real
// sockets.
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import { connect, type AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import type { Identity } from "../auth";
import { createBodyGate } from "./body-gate";
import { useAccountsServer } from "../testing/accounts";
import { CALL_BODY_MAX } from "./call-limits";

/** Sends headers and `sent` bytes of a body declared `declared` long, holds the rest back, and
 *  gives what came back before the server closed the connection (or 10 s passed). */
function holdBody(port: number, path: string, declared: number, sent: number, headers = ""): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let answer = "";
    const timer = setTimeout(() => {
      socket.destroy();
      resolve(`${answer}[still open]`);
    }, 10_000);
    socket.on("data", (c) => (answer += c.toString()));
    socket.on("close", () => {
      clearTimeout(timer);
      resolve(answer);
    });
    socket.on("error", () => {});
    socket.on("connect", () => {
      socket.write(
        `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nContent-Length: ${declared}\r\n${headers}\r\n`,
      );
      socket.write(Buffer.alloc(sent, 0x20));
    });
    socket.on("timeout", reject);
  });
}

describe("a body sent to /api/trpc", () => {
  const server = useAccountsServer("sqlite", { name: "body-gate" });
  const MIB = 1024 * 1024;

  it("from nobody signed in: refused unread, its connection closed, nothing held", async () => {
    const port = server.quiver.port;
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => holdBody(port, "/api/trpc/sessions.create", 63 * MIB, 4 * MIB)),
    );
    for (const a of answers) {
      expect(a).toMatch(/^HTTP\/1\.1 401/);
      expect(a).toContain("sign in first");
      expect(a).not.toContain("[still open]");
    }
    // Closed by the server with 59 MiB of each body unsent: it was not waiting to read them.
  }, 60_000);

  it("from nobody signed in, small: answered by tRPC in its own shape, as a signed-out page expects", async () => {
    const res = await fetch(`${server.quiver.url}/api/trpc/sessions.create`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: server.quiver.url },
      body: JSON.stringify({ title: "nobody's" }),
    });
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: { data: { code: string } } }).error.data.code).toBe("UNAUTHORIZED");
  }, 30_000);

  it("from a signed-in person: read and answered as before", async () => {
    const res = await fetch(`${server.quiver.url}/api/trpc/sessions.create`, {
      method: "POST",
      headers: { ...server.people.headers.member, "content-type": "application/json", origin: server.quiver.url },
      body: JSON.stringify({ title: "through the gate" }),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { result: { data: { id: string } } }).result.data.id).toBeTruthy();
  }, 30_000);
});

// A signed-in person's bodies being read at once are bounded together: one person holding many
// large bodies open made the server hold them all.
describe("a person's bodies being read at once", () => {
  let server: Server | undefined;
  afterEach(() => server?.close());

  it("hold at most the bound together: past it 429, and a finished one gives its room back", async () => {
    const MIB = 1024 * 1024;
    const owner = { kind: "owner", via: "account", actor: { userId: "u1" } } as unknown as Identity;
    const gate = createBodyGate({ identify: async () => owner, maxBytes: CALL_BODY_MAX, perCallerBytes: 200 * MIB });
    server = createServer((req, res) => void gate(req, res, () => req.resume().on("end", () => res.end("read"))));
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const port = (server.address() as AddressInfo).port;
    // Three of 63 MiB fit under 200 MiB; each is held, its body never finished.
    const held = [0, 1, 2].map(() => connect(port, "127.0.0.1"));
    for (const s of held) {
      s.on("error", () => {});
      s.write(`POST /api/trpc/x HTTP/1.1\r\nHost: x\r\nContent-Length: ${63 * MIB}\r\n\r\n`);
    }
    await new Promise((r) => setTimeout(r, 300));
    expect(await holdBody(port, "/api/trpc/x", 63 * MIB, MIB)).toMatch(/^HTTP\/1\.1 429/);
    // One of them goes: its room is given back.
    held[0].destroy();
    await new Promise((r) => setTimeout(r, 300));
    expect(await holdBody(port, "/api/trpc/x", 10, 10)).toMatch(/^HTTP\/1\.1 200[\s\S]*read/);
    for (const s of held) s.destroy();
  }, 30_000);
});
