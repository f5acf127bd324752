// Which listener a preview port reaches: the workspace's namespace first, the machine's loopback
// when nothing of the workspace listens there, and never the machine's once the workspace has
// answered on that port (a preview origin would otherwise change hands under the agent's page).
// The namespace here is a stand-in whose "inside" listener is a server on another loopback port.
import { createServer, type Server } from "node:net";
import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { WorkspaceNamespace } from "../ops";
import { portConnector } from "./index";

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

beforeAll(async () => {
  host = await serve("the machine's service");
  inside = await serve("the agent's page");
});

it("keeps a port the workspace answered on the workspace's, and reaches the machine's only for a port it never held", async () => {
  const open = portConnector(namespace);
  // Nothing of the workspace on the port: a server started outside the sandbox is previewed.
  expect(await read(await open(host))).toBe("the machine's service");

  // The agent serves the same port in the namespace: the preview shows its page.
  listening.set(host, inside);
  expect(await read(await open(host))).toBe("the agent's page");

  // It stops its server: the origin does not fall to the machine's service.
  listening.delete(host);
  await expect(open(host)).rejects.toMatchObject({ code: "ECONNREFUSED", message: expect.stringContaining("before") });

  // Started again, the workspace's page is back.
  listening.set(host, inside);
  expect(await read(await open(host))).toBe("the agent's page");
});
