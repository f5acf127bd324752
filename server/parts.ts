// Composition of the parts that own sockets and background work (runner pool, event hub,
// engine, pipeline). Each part's factory lives in its own folder; this file only wires them.
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { Env } from "./env";
import type { Db, DbProvider } from "./db";
import type { Services } from "./services/types";

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

export async function createParts(_deps: PartsDeps): Promise<Parts> {
  return {
    services: { runners: { status: () => [] } },
    upgrades: [],
    dispose: async () => {},
  };
}
