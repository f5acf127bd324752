"use client";
// The browser's tRPC client: queries and mutations over HTTP batches, subscriptions over one
// WebSocket that reconnects by itself. The socket URL is computed lazily so server rendering
// never touches `location`.
import { useState, type ReactNode } from "react";
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { createTRPCClient, createWSClient, httpBatchLink, splitLink, wsLink } from "@trpc/client";
import { createTRPCContext } from "@trpc/tanstack-react-query";
import type { AppRouter } from "../../server/api/root";

export const { TRPCProvider, useTRPC, useTRPCClient } = createTRPCContext<AppRouter>();

function makeClient() {
  const ws = createWSClient({
    url: () => `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/api/trpc`,
    lazy: { enabled: true, closeMs: 30_000 },
    retryDelayMs: (attempt) => Math.min(10_000, 250 * 2 ** attempt),
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
