// Starts server-child.ts as a real server process for crash tests, with a tRPC client over
// HTTP and WebSocket, and kills it with SIGKILL. Each server gets its own process group, so the
// test can also clean up what it left (its runner) once it is done with it.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { startFakeProvider, type FakeProvider } from "../engine/fake-provider/server";
import type { SessionEvent } from "../protocol/events";
import { trpcClients, type TrpcClient } from "./trpc";

export interface CrashServer {
  url: string;
  child: ChildProcess;
  client: TrpcClient;
  log(): string;
  /** SIGKILL to the server process alone: no cleanup runs, as in a crash. */
  kill9(): Promise<void>;
  /** Kills the whole process group (the server's runner too) and closes the client. */
  cleanup(): void;
}

export async function startCrashServer(env: Record<string, string>): Promise<CrashServer> {
  const child = spawn(process.execPath, ["--import", "tsx", "server/testing/server-child.ts"], {
    cwd: join(import.meta.dirname, "../.."),
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let log = "";
  child.stderr!.on("data", (d) => (log += d));
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (d) => {
      out += d;
      const m = /ready (\S+)/.exec(out);
      if (m) resolve(m[1]);
    });
    child.on("exit", (code) => reject(new Error(`server exited (${code}) before it was ready:\n${log}`)));
  });
  const { ws: wsClient, client } = trpcClients(url, { retryDelayMs: () => 200 });
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  return {
    url,
    child,
    client,
    log: () => log,
    async kill9() {
      child.kill("SIGKILL");
      await exited;
      wsClient.close();
    },
    cleanup() {
      wsClient.close();
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        /* already gone */
      }
    },
  };
}

/**
 * A crash test's surroundings, set up before the file's tests and torn down after them: a fake
 * provider, a data folder with an empty workspace, and `start()` for each server life on it.
 */
export function useCrashServers(prefix: string, extraEnv: Record<string, string> = {}) {
  const servers: CrashServer[] = [];
  const ctx = {
    fake: undefined as unknown as FakeProvider,
    dataDir: "",
    async start(): Promise<CrashServer> {
      const server = await startCrashServer({
        QUIVER_DATA_DIR: ctx.dataDir,
        QUIVER_PROVIDER: "anthropic",
        QUIVER_MODEL: "claude-test",
        ANTHROPIC_API_KEY: "test-key",
        ANTHROPIC_BASE_URL: ctx.fake.anthropicBaseURL,
        DATABASE_URL: "",
        ...extraEnv,
      });
      servers.push(server);
      return server;
    },
  };
  beforeAll(async () => {
    ctx.fake = await startFakeProvider();
    ctx.dataDir = mkdtempSync(join(tmpdir(), `quiver-${prefix}-`));
    mkdirSync(join(ctx.dataDir, "workspace"));
  });
  afterAll(async () => {
    for (const s of servers) s.cleanup();
    await ctx.fake?.close();
    if (ctx.dataDir) rmSync(ctx.dataDir, { recursive: true, force: true });
  });
  return ctx;
}

/** Follows a session's events on `server` from the start until `until` says so: `seen` fills as
 *  they come, `done` resolves with them (or rejects naming what came, after `timeoutMs`). */
export function watchEvents(
  server: CrashServer,
  sessionId: string,
  until: (ev: SessionEvent, all: SessionEvent[]) => boolean,
  timeoutMs = 30_000,
): { seen: SessionEvent[]; done: Promise<SessionEvent[]> } {
  const seen: SessionEvent[] = [];
  const done = new Promise<SessionEvent[]>((resolve, reject) => {
    const timer = setTimeout(() => {
      sub.unsubscribe();
      reject(new Error(`timed out; saw ${seen.map((e) => e.type).join(", ")}`));
    }, timeoutMs);
    const sub = server.client.turns.events.subscribe(
      { sessionId, lastSeq: 0 },
      {
        onData: (t) => {
          const ev = (t as { data: SessionEvent }).data;
          seen.push(ev);
          if (until(ev, seen)) {
            clearTimeout(timer);
            sub.unsubscribe();
            resolve(seen);
          }
        },
        onError: () => undefined,
      },
    );
  });
  return { seen, done };
}
