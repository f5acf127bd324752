// Which listener a preview origin (a session's port) reaches: the workspace's namespace first, the
// machine's loopback when nothing of the workspace listens there, and then always the side that
// answered first, across runner restarts too (an origin would otherwise change hands under a page
// already running there). The namespace here is a stand-in whose "inside" listener is a server on
// another loopback port; the origins file is a real one.
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, expect, it, vi } from "vitest";
import type { WorkspaceNamespace } from "../ops";
import type { PreviewRunnerFrame } from "../../server/protocol/preview";
import { portConnector, previewHandler } from "./index";
import { PortOrigins } from "./port-origins";

const servers: Server[] = [];
async function serve(text: string, port = 0): Promise<number> {
  const server = createServer((s) => s.end(text));
  servers.push(server);
  await new Promise<void>((ok) => server.listen(port, "127.0.0.1", ok));
  return (server.address() as { port: number }).port;
}
afterAll(() => servers.forEach((s) => s.close()));

const read = (socket: Socket) =>
  new Promise<string>((ok, fail) => {
    let text = "";
    socket
      .on("data", (d) => (text += String(d)))
      .on("end", () => ok(text))
      .on("error", fail);
  });

let host: number;
let inside: number;
/** What the workspace's namespace holds: port → the stand-in listener serving it. */
const listening = new Map<number, number>();
const namespace: WorkspaceNamespace = {
  procNet: async () => undefined,
  connect: (port) => {
    const to = listening.get(port);
    if (to === undefined) return Promise.reject(Object.assign(new Error("refused"), { code: "ECONNREFUSED" }));
    return new Promise((ok, fail) => {
      const s = connect({ host: "127.0.0.1", port: to }, () => ok(s)).once("error", fail);
    });
  },
};

let dir: string;
beforeAll(async () => {
  host = await serve("the machine's service");
  inside = await serve("the agent's page");
  dir = await mkdtemp(join(tmpdir(), "quiver-origins-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));
beforeEach(() => listening.clear());

it("keeps an origin the workspace answered the workspace's, even once its server stops", async () => {
  const open = portConnector(namespace);
  listening.set(host, inside);
  expect(await read(await open(host, "s1"))).toBe("the agent's page");

  // It stops its server: the origin does not fall to the machine's service.
  listening.delete(host);
  await expect(open(host, "s1")).rejects.toMatchObject({
    code: "ECONNREFUSED",
    message: expect.stringContaining("before"),
  });

  // Started again, the workspace's page is back.
  listening.set(host, inside);
  expect(await read(await open(host, "s1"))).toBe("the agent's page");
});

it("keeps an origin the machine answered the machine's: the agent's server on that port does not take it over", async () => {
  const open = portConnector(namespace);
  // Nothing of the workspace on the port: a server started outside the sandbox is previewed.
  expect(await read(await open(host, "s2"))).toBe("the machine's service");

  // The agent serves the same port in the namespace: this origin (and its cookies) stays the machine's.
  listening.set(host, inside);
  expect(await read(await open(host, "s2"))).toBe("the machine's service");
  // Another session's origin for that port was never answered: the workspace's comes first there.
  expect(await read(await open(host, "s3"))).toBe("the agent's page");
});

it("tells the person why when the machine's side of an origin stops listening", async () => {
  const gone = await serve("briefly");
  const frames: PreviewRunnerFrame[] = [];
  const handler = previewHandler((f) => (frames.push(f), true), namespace);
  const request = (streamId: string) =>
    handler.handle({
      type: "preview.request",
      streamId,
      sessionId: "s4",
      port: gone,
      method: "GET",
      path: "/",
      headers: [],
      hasBody: false,
      deadline: Date.now() + 10_000,
    });
  request("first");
  await vi.waitFor(() => expect(frames.some((f) => f.type === "preview.end")).toBe(true));
  servers.pop()!.close(); // no more connections from now (the first may still be open)
  listening.set(gone, inside);
  request("second");
  await vi.waitFor(() =>
    expect(frames.find((f) => f.type === "preview.end" && f.streamId === "second")).toMatchObject({
      error: { code: "refused", message: expect.stringContaining("a server there answered this preview first") },
    }),
  );
});

it("remembers each origin's side across a runner restart, in its file", async () => {
  const file = join(dir, "origins.json");
  const before = portConnector(namespace, false, new PortOrigins(file));
  listening.set(host, inside);
  expect(await read(await before(host, "w"))).toBe("the agent's page");
  listening.delete(host);
  expect(await read(await before(host, "m"))).toBe("the machine's service");

  // A new runner reads the file: "w" never reaches the machine, "m" never the workspace.
  const after = portConnector(namespace, false, new PortOrigins(file));
  await expect(after(host, "w")).rejects.toMatchObject({ code: "ECONNREFUSED" });
  listening.set(host, inside);
  expect(await read(await after(host, "m"))).toBe("the machine's service");
  expect(JSON.parse(await readFile(file, "utf8"))).toEqual({
    origins: { [`w:${host}`]: "workspace", [`m:${host}`]: "machine" },
  });
});

it("starts afresh from a file that is not its own, and keeps bindings in memory where it cannot write", async () => {
  const logged: string[] = [];
  const bad = join(dir, "bad.json");
  await writeFile(bad, '{"origins": {"x:1": "elsewhere"}}');
  expect(new PortOrigins(bad, (l) => logged.push(l)).sideOf("x", 1)).toBeUndefined();
  expect(logged[0]).toContain("starting afresh");

  const nowhere = new PortOrigins(join(dir, "missing-folder", "o.json"), (l) => logged.push(l));
  nowhere.bind("a", 1, "machine");
  nowhere.bind("b", 1, "workspace");
  expect([nowhere.sideOf("a", 1), nowhere.sideOf("b", 1)]).toEqual(["machine", "workspace"]);
  expect(logged.filter((l) => l.includes("cannot write"))).toHaveLength(1);
});

it("keeps the latest 10,000 origins", () => {
  const origins = new PortOrigins();
  for (let i = 0; i <= 10_000; i++) origins.bind(`s${i}`, 3000, "workspace");
  expect(origins.sideOf("s0", 3000)).toBeUndefined();
  expect(origins.sideOf("s1", 3000)).toBe("workspace");
  expect(origins.sideOf("s10000", 3000)).toBe("workspace");
});
