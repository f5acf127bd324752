// Composition of the parts that own sockets and background work (runner pool, event hub,
// engine, pipeline). Each part's factory lives in its own folder; this file only wires them.
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { Env } from "./env";
import type { Db, DbProvider } from "./db";
import type { Services } from "./services/types";
import { RunnerPool } from "./executors/runner-pool";
import { createFileService } from "./services/files";
import { createTerminalBridge } from "./hub/terminal";

export interface PartsDeps {
  env: Env;
  db: Db;
  dbProvider: DbProvider;
  runnerTokens: string[];
  log: (line: string) => void;
}

export interface Parts {
  services: Omit<Services, "env" | "db" | "dbProvider" | "sessions" | "health">;
  upgrades: [string, (req: IncomingMessage, socket: Duplex, head: Buffer) => void][];
  dispose(): Promise<void>;
}

export async function createParts({ db, runnerTokens, log }: PartsDeps): Promise<Parts> {
  const runners = new RunnerPool({ tokens: runnerTokens, log });
  const stopLogging = runners.onStatus((e) => log(`runner ${e.runnerId} ${e.connected ? "connected" : "gone"}${e.connected && !e.sandboxed ? " (unsandboxed)" : ""}`));
  // The IDE's own file operations and terminals (the person's, not the agent's).
  const files = createFileService(runners);
  const terminal = createTerminalBridge({
    pty: runners.pty,
    authorize: async (_req, sessionId) => (await db.session.count({ where: { id: sessionId } })) > 0,
    log,
  });
  return {
    services: { runners, files },
    upgrades: [
      ["/runner", (req, socket, head) => runners.handleUpgrade(req, socket, head)],
      [terminal.path, (req, socket, head) => terminal.handleUpgrade(req, socket, head)],
    ],
    dispose: async () => {
      stopLogging();
      terminal.dispose();
      await runners.dispose();
    },
  };
}
