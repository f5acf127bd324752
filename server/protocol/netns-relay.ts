// The pipe between a runner and its namespace relay (runner/exec/netns-relay.ts), the process
// that holds a workspace's network namespace and opens TCP connections inside it for the live
// preview. Each connection to the relay's Unix socket starts with one JSON line from the runner
// naming a port, and one JSON line back; after an `ok` the socket carries the TCP stream as is.
import { z } from "zod";

export const RelayOpen = z.object({ port: z.number().int().min(1).max(65535) }).strict();
export type RelayOpen = z.infer<typeof RelayOpen>;

export const RelayAnswer = z.union([
  z.object({ ok: z.literal(true) }),
  /** code: the errno name of the failed connect (ECONNREFUSED: nothing listens there). */
  z.object({ ok: z.literal(false), code: z.string(), message: z.string() }),
]);
export type RelayAnswer = z.infer<typeof RelayAnswer>;

/** Longest request or answer line; a peer that sends more is cut off. */
export const RELAY_LINE_MAX = 512;
