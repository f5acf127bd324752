// A test's tRPC client of a running Quiver server, as the IDE page has one: subscriptions over
// the WebSocket, everything else batched over HTTP. The caller closes `ws` when done.
import WebSocket from "ws";
import { createTRPCClient, createWSClient, httpBatchLink, splitLink, wsLink } from "@trpc/client";
import type { AppRouter } from "../api/root";

export type TrpcClient = ReturnType<typeof createTRPCClient<AppRouter>>;
export type TrpcSocket = ReturnType<typeof createWSClient>;

/** `url`: the server's http origin. `retryDelayMs`: how soon the socket reconnects after a drop. */
export function trpcClients(
  url: string,
  options: { retryDelayMs?: () => number } = {},
): { ws: TrpcSocket; client: TrpcClient } {
  const ws = createWSClient({
    url: `${url.replace("http", "ws")}/api/trpc`,
    WebSocket: WebSocket as never,
    ...options,
  });
  const client = createTRPCClient<AppRouter>({
    links: [
      splitLink({
        condition: (op) => op.type === "subscription",
        true: wsLink({ client: ws }),
        false: httpBatchLink({ url: `${url}/api/trpc` }),
      }),
    ],
  });
  return { ws, client };
}
