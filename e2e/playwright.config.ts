// Browser tests: Debian's chromium against the real server (production build, real runner,
// a fresh data folder per run). Playwright never downloads a browser here.
import { defineConfig } from "@playwright/test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const port = Number(process.env.E2E_PORT ?? 3217);
// The fake model provider runs inside the test worker (e2e/fixtures.ts) on this port.
const modelPort = Number(process.env.E2E_MODEL_PORT ?? 3218);
process.env.E2E_MODEL_PORT = String(modelPort);
const dataDir = process.env.E2E_DATA_DIR ?? mkdtempSync(join(tmpdir(), "quiver-e2e-"));
process.env.E2E_DATA_DIR = dataDir; // workers re-evaluate this file: keep one folder
// A second server with accounts on (QUIVER_AUTH=accounts, open sign-up so each test makes its own
// people and orgs) and a data folder of its own, for the accounts, orgs, SSO and authorization
// specs (e2e/accounts-fixtures.ts). Started when a run names such a spec, or runs everything, or
// E2E_ACCOUNTS=1.
const accountsPort = Number(process.env.E2E_ACCOUNTS_PORT ?? 3219);
process.env.E2E_ACCOUNTS_PORT = String(accountsPort);
const accountsDataDir = process.env.E2E_ACCOUNTS_DATA_DIR ?? mkdtempSync(join(tmpdir(), "quiver-e2e-accounts-"));
process.env.E2E_ACCOUNTS_DATA_DIR = accountsDataDir;
// Spec names or folders on the command line (not this config's own path, which `--config` names).
const named = process.argv
  .slice(2)
  .filter((a) => !a.startsWith("-") && !/playwright\.config\.ts$/.test(a) && /\.spec\.ts$|^e2e\b/.test(a));
const accountsServer =
  process.env.E2E_ACCOUNTS === "1" ||
  named.length === 0 ||
  named.some((a) => /(accounts|orgs|sso|authz|audit|members)[-.]/.test(a));
const serverEnv = {
  NEXT_TELEMETRY_DISABLED: "1",
  QUIVER_LOG_LEVEL: "warn",
  QUIVER_PROVIDER: "anthropic",
  QUIVER_MODEL: "fake-model",
  ANTHROPIC_API_KEY: "fake-key",
  ANTHROPIC_BASE_URL: `http://127.0.0.1:${modelPort}`,
};
const serverCommon = {
  command: "npx tsx server/main.ts",
  cwd: "..",
  // The server builds the web app first when its sources changed: minutes on a busy machine
  // (two servers starting together build it once: server/next-build.ts).
  timeout: Number(process.env.E2E_SERVER_TIMEOUT_MS ?? 240_000),
  reuseExistingServer: false,
  stdout: "pipe" as const,
};

export default defineConfig({
  testDir: ".",
  outputDir: "../test-results/e2e",
  timeout: 60_000,
  expect: { timeout: 15_000 },
  fullyParallel: false,
  workers: 1,
  retries: 0,
  reporter: [["list"], ["json", { outputFile: "../test-results/playwright.json" }]],
  use: {
    baseURL: `http://127.0.0.1:${port}`,
    screenshot: "only-on-failure",
    trace: "retain-on-failure",
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    },
  },
  webServer: [
    {
      ...serverCommon,
      url: `http://127.0.0.1:${port}/api/health`,
      // The suite opens a terminal in well over 32 sessions (the runner's cap): ones no page shows
      // any more end after 3 minutes instead of 60, so later specs get a terminal.
      env: { ...serverEnv, PORT: String(port), QUIVER_DATA_DIR: dataDir, QUIVER_TERMINAL_IDLE_MINUTES: "3" },
    },
    ...(accountsServer
      ? [
          {
            ...serverCommon,
            url: `http://127.0.0.1:${accountsPort}/api/health`,
            env: {
              ...serverEnv,
              PORT: String(accountsPort),
              QUIVER_DATA_DIR: accountsDataDir,
              QUIVER_AUTH: "accounts",
              QUIVER_SIGNUP: "open",
              QUIVER_SSO_PRIVATE_ISSUERS: "http://127.0.0.1:3220",
              // sso-signin.spec.ts answers the TXT lookups that prove its domain (server/testing/dns-server.ts).
              QUIVER_SSO_DNS_SERVERS: "127.0.0.1:3221",
            },
          },
        ]
      : []),
  ],
});
