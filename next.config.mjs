// Next.js config. Types are checked by `npm run typecheck` (the whole repo), not by next build.
/** @type {import('next').NextConfig} */
const config = {
  reactStrictMode: true,
  poweredByHeader: false,
  typescript: { ignoreBuildErrors: true },
  // server/ is run by tsx in the same process; Next bundles only app/ and what it imports.
  serverExternalPackages: ["better-sqlite3", "node-pty", "@prisma/client"],
  async headers() {
    return [
      {
        source: "/:path*",
        headers: [
          { key: "X-Content-Type-Options", value: "nosniff" },
          { key: "Referrer-Policy", value: "no-referrer" },
        ],
      },
      // Cross-origin isolation (COOP + COEP) is what an in-browser WebContainer needs to boot, and
      // it is only ever tried in the IDE (app/_lib/webcontainer.ts says what it does today), so
      // only the IDE's pages send them: sign-in, single sign-on, invitations and home need
      // neither. A page reached by client-side navigation keeps its first document's headers,
      // so an IDE opened from home is not isolated and offers no WebContainer until reloaded.
      {
        source: "/s/:path*",
        headers: [
          { key: "Cross-Origin-Opener-Policy", value: "same-origin" },
          { key: "Cross-Origin-Embedder-Policy", value: "credentialless" },
        ],
      },
      // A dedicated worker of an isolated page must itself be served with a COEP: without it
      // Chromium blocks the script (ERR_BLOCKED_BY_RESPONSE) and Monaco's editor and language
      // workers never start (TypeScript's features hang; the rest runs on the page's thread).
      // The header means nothing on the other static files.
      {
        source: "/_next/static/:path*",
        headers: [{ key: "Cross-Origin-Embedder-Policy", value: "credentialless" }],
      },
    ];
  },
};

export default config;
