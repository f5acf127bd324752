// Prisma CLI configuration for prisma/tasks.ts only: the WebAssembly schema engine through a
// driver adapter, so no native engine is downloaded (its host is unreachable from air-gapped
// installs). The server itself never runs the CLI; it applies committed migrations with server/db/migrate.ts.
import { defineConfig } from "prisma/config";
import { PrismaBetterSQLite3 } from "@prisma/adapter-better-sqlite3";
import { PrismaPg } from "@prisma/adapter-pg";

const provider = process.env.QUIVER_PRISMA_PROVIDER ?? "sqlite";
const url = process.env.QUIVER_PRISMA_URL ?? "file:./.quiver-prisma-cli.db";

export default defineConfig({
  experimental: { adapter: true },
  engine: "js",
  schema: provider === "sqlite" ? "./schema.prisma" : "./.generated/postgresql.prisma",
  async adapter() {
    return provider === "sqlite" ? new PrismaBetterSQLite3({ url }) : new PrismaPg({ connectionString: url });
  },
});
