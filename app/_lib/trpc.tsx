"use client";
// The browser's tRPC client: queries and mutations over HTTP batches, a file's contents in a
// request of its own, subscriptions over one WebSocket that reconnects by itself. The socket
// exists only in the browser. On the share view all of them are marked as the view's
// (app/_components/share/share-view.ts).
import { useState, useSyncExternalStore, type ReactNode } from "react";
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import {
  createTRPCClient,
  createWSClient,
  httpBatchLink,
  httpBatchStreamLink,
  httpLink,
  splitLink,
  wsLink,
} from "@trpc/client";
import { createTRPCContext } from "@trpc/tanstack-react-query";
import type { AppRouter } from "../../server/api/root";
import { shareViewHeaders, shareViewSocketUrl } from "../_components/share/share-view";

export const { TRPCProvider, useTRPC, useTRPCClient } = createTRPCContext<AppRouter>();

// The event socket's state, for the connection banner: "idle" until first used.
type SocketState = "idle" | "open" | "closed";
let socketState: SocketState = "idle";
const socketListeners = new Set<() => void>();
function setSocketState(next: SocketState) {
  socketState = next;
  for (const l of socketListeners) l();
}
export function useEventSocketState(): SocketState {
  return useSyncExternalStore(
    (l) => (socketListeners.add(l), () => socketListeners.delete(l)),
    () => socketState,
    () => "idle",
  );
}

let eventSocket: { close(): void } | undefined;
/** Closes the event socket for good (a share link that ended: reconnecting cannot help). */
export function closeEventSocket(): void {
  eventSocket?.close();
}

/** A file's contents: large answers a person is waiting on, each the only one in its request. */
const WHOLE_BODY = new Set(["files.read", "files.raw"]);

function makeClient() {
  const ws = (eventSocket = createWSClient({
    url: () => shareViewSocketUrl(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/api/trpc`),
    // Not lazy: the session's event subscription keeps it open anyway, and a lazy close would
    // read as a dropped connection.
    retryDelayMs: (attempt) => Math.min(5_000, 250 * 2 ** attempt),
    onOpen: () => setSocketState("open"),
    onClose: () => setSocketState("closed"),
  }));
  return createTRPCClient<AppRouter>({
    links: [
      splitLink({
        condition: (op) => op.type === "subscription",
        true: wsLink({ client: ws }),
        false: splitLink({
          condition: (op) => WHOLE_BODY.has(op.path),
          // Not held for the batch's timer (a task, queued behind whatever else the page has to
          // do), and read as one body: Chromium hands a streamed batch's 450 KB file to the
          // page 20-40 ms later than one plain response.
          true: httpLink({ url: "/api/trpc", headers: shareViewHeaders }),
          // Streamed: each answer arrives as soon as it is ready, so a slow procedure in the
          // batch does not hold back who the person is or the session.
          false: httpBatchStreamLink({ url: "/api/trpc", headers: shareViewHeaders }),
        }),
      }),
    ],
  });
}

const makeQueryClient = () =>
  new QueryClient({ defaultOptions: { queries: { staleTime: 5_000, refetchOnWindowFocus: false } } });

// One of each per page, outside React: a render React throws away (the root suspending while it
// hydrates, with no boundary above these providers) would run useState initializers again, and
// every discarded client would keep its own socket open and reconnecting. Server rendering gets
// fresh ones per request and no socket at all (it could not resolve the URL and would retry for
// the life of the server process).
let browser: { trpc: ReturnType<typeof makeClient>; query: QueryClient } | undefined;
function clients() {
  if (typeof window === "undefined") {
    return {
      trpc: createTRPCClient<AppRouter>({ links: [httpBatchLink({ url: "/api/trpc" })] }),
      query: makeQueryClient(),
    };
  }
  return (browser ??= { trpc: makeClient(), query: makeQueryClient() });
}

export function Providers({ children }: { children: ReactNode }) {
  const [{ trpc, query }] = useState(clients);
  return (
    <QueryClientProvider client={query}>
      <TRPCProvider trpcClient={trpc} queryClient={query}>
        {children}
      </TRPCProvider>
    </QueryClientProvider>
  );
}
