// Root layout: theme follows the system; the tRPC client is provided to every page. Every page
// renders per request, since its inline scripts carry that answer's CSP nonce
// (server/http/page-csp.ts): a page prerendered at build time would have none and not run.
import type { Metadata } from "next";
import type { ReactNode } from "react";
import { Providers } from "./_lib/trpc";
import "./globals.css";

export const dynamic = "force-dynamic";

export const metadata: Metadata = {
  title: "Quiver",
  description: "A browser IDE with a governed coding agent",
  icons: { icon: "/favicon.svg" },
};

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body>
        <Providers>{children}</Providers>
      </body>
    </html>
  );
}
