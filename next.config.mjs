// Next.js config. Types are checked by `npm run typecheck` (the whole repo), not by next build.
/** @type {import('next').NextConfig} */
const config = {
  reactStrictMode: true,
  poweredByHeader: false,
  typescript: { ignoreBuildErrors: true },
  // server/ is run by tsx in the same process; Next bundles only app/ and what it imports.
  serverExternalPackages: ["better-sqlite3", "node-pty", "@prisma/client"],
  async headers() {
    // Cross-origin isolation (COOP + COEP) is what a WebContainer needs to boot in the page.
    return [
      {
        source: "/:path*",
        headers: [
          { key: "Cross-Origin-Opener-Policy", value: "same-origin" },
          { key: "Cross-Origin-Embedder-Policy", value: "credentialless" },
          { key: "X-Content-Type-Options", value: "nosniff" },
          { key: "Referrer-Policy", value: "no-referrer" },
        ],
      },
    ];
  },
};

export default config;
