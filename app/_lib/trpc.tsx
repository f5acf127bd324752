"use client";
// The browser's tRPC client: queries and mutations over HTTP batches, subscriptions over one
// WebSocket that reconnects by itself. The socket URL is computed lazily so server rendering
// never touches `location`.
import { useState, useSyncExternalStore, type ReactNode } from "react";
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { createTRPCClient, createWSClient, httpBatchLink, splitLink, wsLink } from "@trpc/client";
import { createTRPCContext } from "@trpc/tanstack-react-query";
import type { AppRouter } from "../../server/api/root";

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

function makeClient() {
  const ws = createWSClient({
    url: () => `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/api/trpc`,
    // Not lazy: the session's event subscription keeps it open anyway, and a lazy close would
    // read as a dropped connection.
    retryDelayMs: (attempt) => Math.min(5_000, 250 * 2 ** attempt),
    onOpen: () => setSocketState("open"),
    onClose: () => setSocketState("closed"),
  });
  return createTRPCClient<AppRouter>({
    links: [
      splitLink({
        condition: (op) => op.type === "subscription",
        true: wsLink({ client: ws }),
        false: httpBatchLink({ url: "/api/trpc" }),
      }),
    ],
  });
}

export function Providers({ children }: { children: ReactNode }) {
  const [queryClient] = useState(
    () => new QueryClient({ defaultOptions: { queries: { staleTime: 5_000, refetchOnWindowFocus: false } } }),
  );
  const [trpcClient] = useState(makeClient);
  return (
    <QueryClientProvider client={queryClient}>
      <TRPCProvider trpcClient={trpcClient} queryClient={queryClient}>
        {children}
      </TRPCProvider>
    </QueryClientProvider>
  );
}
