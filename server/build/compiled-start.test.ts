// `npm start`'s path: the server compiled ahead of time (compile.mjs) into a build folder of its
// own, started on a fresh data folder with its local runner, answers /api/health and tRPC calls
// that reach the database (its query thread) and the runner, runs the compiled runner (not tsx),
// and leaves no runner behind when stopped. Started without the web app (--no-web): the pages
// are the same Next build under tsx and the browser tests serve them, so no `next build` here.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTRPCClient, httpBatchLink } from "@trpc/client";
import type { AppRouter } from "../api/root";
import { compiledServer } from "./compile.mjs";
import { freePort } from "../testing/ports";

const root = join(import.meta.dirname, "..", "..");

/** Processes whose command line names `needle` (the build folder: its runner and nothing else's). */
function processesNaming(needle: string): { pid: number; argv: string[] }[] {
  const found: { pid: number; argv: string[] }[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const argv = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0").filter(Boolean);
      if (argv.some((a) => a.includes(needle))) found.push({ pid: Number(entry), argv });
    } catch {
      // exited meanwhile
    }
  }
  return found;
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, ms: number, output: () => string) {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what} within ${ms / 1000} s; server output:\n${output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("the compiled server (npm start)", () => {
  // Inside the checkout: the bundles find their packages in its node_modules.
  const buildRoot = join(root, ".quiver", `test-build-${process.pid}`);
  const dataDir = mkdtempSync(join(tmpdir(), "quiver-compiled-"));
  let buildDir: string;
  let server: ChildProcess;
  let url: string;
  let output = "";

  beforeAll(async () => {
    buildDir = await compiledServer(buildRoot, () => {});
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    server = spawn(process.execPath, [join(buildDir, "server-main.mjs"), "--no-web"], {
      cwd: root,
      env: { ...process.env, PORT: String(port), QUIVER_DATA_DIR: dataDir, QUIVER_LOCAL_RUNNER: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    server.stdout!.on("data", (d) => (output += d));
    server.stderr!.on("data", (d) => (output += d));
  }, 120_000);

  afterAll(() => {
    if (server.exitCode === null && server.signalCode === null) server.kill("SIGKILL");
    for (const left of processesNaming(buildDir)) process.kill(left.pid, "SIGKILL");
    rmSync(buildRoot, { recursive: true, force: true });
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("serves health and tRPC through its compiled runner, and stops it on a Ctrl-C delivered twice", async () => {
    const health = await until(
      "a healthy server with its runner connected",
      async () => {
        const res = await fetch(`${url}/api/health`);
        const body = (await res.json()) as { runners: { connected: boolean }[] };
        return res.status === 200 && body.runners.some((r) => r.connected) ? body : undefined;
      },
      150_000,
      () => output,
    );
    expect(health).toMatchObject({ database: { provider: "sqlite", up: true, writable: true } });

    const runner = processesNaming(join(buildDir, "runner-main.mjs"));
    expect(runner).toHaveLength(1);
    expect(runner[0].argv.join(" ")).not.toContain("tsx");

    const trpc = createTRPCClient<AppRouter>({ links: [httpBatchLink({ url: `${url}/api/trpc` })] });
    const session = await trpc.sessions.create.mutate({ title: "compiled" });
    await trpc.files.save.mutate({ sessionId: session.id, path: "hello.txt", content: "from the compiled runner\n" });
    const read = await trpc.files.read.query({ sessionId: session.id, path: "hello.txt" });
    expect(read).toMatchObject({ content: "from the compiled runner\n" });

    const exited = new Promise<number | null>((resolve) => server.once("exit", (code) => resolve(code)));
    // As a terminal's Ctrl-C reaches it under `npm start`: from the terminal and forwarded by npm.
    // Both are one request to stop cleanly (exit 0), not a second Ctrl-C's "now" (130).
    // (npm forwards it a few milliseconds later; two pending at once would be delivered as one.)
    server.kill("SIGINT");
    await new Promise((r) => setTimeout(r, 50));
    server.kill("SIGINT");
    expect(await exited).toBe(0);
    expect(output.match(/SIGINT: stopping/g)).toHaveLength(1);
    expect(processesNaming(buildDir)).toEqual([]);
  }, 200_000);
});
