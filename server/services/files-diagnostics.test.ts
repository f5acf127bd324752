// files.diagnostics through tRPC against a real server and its real local runner: the editor
// gets the open file's diagnostics from the runner's language server (the same the agent gets
// after an edit), none once the person fixed it, nothing for a file it does not check.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createTRPCClient, httpBatchLink } from "@trpc/client";
import { startQuiver, type Quiver } from "../app";
import { parseEnv } from "../env";
import type { AppRouter } from "../api/root";
import { waitFor } from "../testing/runner";

const root = resolve(import.meta.dirname, "../..");

describe("files.diagnostics", () => {
  let quiver: Quiver;
  let dataDir: string;
  let client: ReturnType<typeof createTRPCClient<AppRouter>>;
  let sessionId: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "quiver-diag-"));
    mkdirSync(join(dataDir, "workspace"), { recursive: true });
    quiver = await startQuiver({
      env: parseEnv({ PORT: "0", QUIVER_DATA_DIR: dataDir }),
      root,
      web: false,
      log: () => {},
    });
    client = createTRPCClient<AppRouter>({ links: [httpBatchLink({ url: `${quiver.url}/api/trpc` })] });
    await waitFor(async () => (await quiver.services.health()).ok, 30_000, "runner");
    sessionId = (await client.sessions.create.mutate({ title: "diag" })).id;
  }, 90_000);

  afterAll(async () => {
    await quiver?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("marks a type error in a saved file, and nothing once it is fixed", async () => {
    const saved = await client.files.save.mutate({
      sessionId,
      path: "src/x.ts",
      content: "export const ok: boolean = 1;\n",
      expectHash: null,
    });
    const got = await waitFor(
      async () => {
        const r = await client.files.diagnostics.query({ sessionId, path: "src/x.ts" });
        return r.ready ? r : undefined;
      },
      90_000,
      "diagnostics ready",
    );
    expect(got.diagnostics).toEqual([
      {
        line: 1,
        column: 14,
        endLine: 1,
        endColumn: 16,
        severity: "error",
        code: 2322,
        message: "Type 'number' is not assignable to type 'boolean'.",
      },
    ]);
    await client.files.save.mutate({
      sessionId,
      path: "src/x.ts",
      content: "export const ok: boolean = true;\n",
      expectHash: saved.hash,
    });
    expect(await client.files.diagnostics.query({ sessionId, path: "src/x.ts" })).toEqual({
      path: "src/x.ts",
      ready: true,
      diagnostics: [],
    });
    expect(await client.files.diagnostics.query({ sessionId, path: "README.md" })).toEqual({
      path: "README.md",
      ready: true,
      diagnostics: [],
    });
  }, 120_000);
});
