// Composition of the parts that own sockets and background work (runner pool, event hub,
// engine, pipeline). Each part's factory lives in its own folder; this file only wires them.
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { Env } from "./env";
import type { Db, DbProvider } from "./db";
import type { Services } from "./services/types";
import { RunnerPool } from "./executors/runner-pool";

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

export async function createParts({ runnerTokens, log }: PartsDeps): Promise<Parts> {
  const runners = new RunnerPool({ tokens: runnerTokens, log });
  const stopLogging = runners.onStatus((e) => log(`runner ${e.runnerId} ${e.connected ? "connected" : "gone"}${e.connected && !e.sandboxed ? " (unsandboxed)" : ""}`));
  return {
    services: { runners },
    upgrades: [["/runner", (req, socket, head) => runners.handleUpgrade(req, socket, head)]],
    dispose: async () => {
      stopLogging();
      await runners.dispose();
    },
  };
}
