// Vitest: unit and integration tests beside the code (server/, runner/, app/). Browser tests
// are Playwright's (e2e/).
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

export default defineConfig({
  root: fileURLToPath(new URL("..", import.meta.url)),
  test: {
    include: [
      "server/**/*.test.ts",
      "runner/**/*.test.ts",
      "app/**/*.test.ts",
      "app/**/*.test.tsx",
      "bench/**/*.test.ts",
    ],
    exclude: ["**/node_modules/**", "**/generated/**"],
    environment: "node",
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Integration tests spawn runners and databases: two cores, so keep the pool small.
    pool: "forks",
    maxWorkers: 2,
  },
});
