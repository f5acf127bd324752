// Test helper: hand-made runners on /runner, for tests of what the server accepts of a runner's
// hello (its id, its token, its key, the facts it states): a socket that authenticates with a
// token, the hello a runner sends, and how the server ended the connection.
import WebSocket from "ws";
import { RUNNER_PROTOCOL_VERSION } from "../protocol/runner";
import type { Cleanups } from "./cleanups";

/** The shared QUIVER_RUNNER_TOKEN of these tests: it may say any runner id nobody bound. */
export const SHARED_RUNNER_TOKEN = "shared-runner-token-0123456789";

/** A runner's hello as a hand-made client sends it (tests of what the server accepts of one). */
export function runnerHello(runnerId: string, extra: object = {}): string {
  return JSON.stringify({
    type: "hello",
    protocol: RUNNER_PROTOCOL_VERSION,
    runnerId,
    workspace: "/nowhere",
    version: "t",
    sandbox: { available: true, kind: "bubblewrap", network: "isolated" },
    workspaceVersion: 0,
    ...extra,
  });
}

export interface RunnerSocket {
  ws: WebSocket;
  /** How the server ended the connection. */
  closed: Promise<{ code: number; reason: string }>;
}

/**
 * A socket on /runner authenticated with `token`, open and silent (the server speaks only after
 * a hello); with `cleanups`, it is terminated after the test.
 */
export async function openRunnerSocket(url: string, token: string, cleanups?: Cleanups): Promise<RunnerSocket> {
  const ws = new WebSocket(url, { headers: { authorization: `Bearer ${token}` } });
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on("close", (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  ws.on("error", () => {});
  await new Promise((resolve, reject) => ws.once("open", resolve).once("error", reject));
  cleanups?.push(async () => ws.terminate());
  return { ws, closed };
}

/**
 * A hand-made runner on a socket of `token`, saying hello as `runnerId` (with `extra` facts). The
 * server answers only the hello, so a listener added once this resolves misses nothing.
 */
export async function helloRunner(
  url: string,
  token: string,
  runnerId: string,
  extra: object = {},
  cleanups?: Cleanups,
): Promise<RunnerSocket> {
  const socket = await openRunnerSocket(url, token, cleanups);
  socket.ws.send(runnerHello(runnerId, extra));
  return socket;
}
