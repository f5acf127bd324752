// Prisma chores without Prisma's native engines (their download host is often unreachable): derive the PostgreSQL
// schema from the one source schema, generate both clients, and write new migrations.
//   tsx prisma/tasks.ts generate          both clients (runs on npm install)
//   tsx prisma/tasks.ts migration NAME    a new migration folder for each provider
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const prismaDir = dirname(fileURLToPath(import.meta.url));
const root = dirname(prismaDir);
const source = join(prismaDir, "schema.prisma");
export const providers = ["sqlite", "postgresql"] as const;
type Provider = (typeof providers)[number];

/** The schema file the CLI gets for a provider: the source itself, or its PostgreSQL twin. */
function schemaFor(provider: Provider, from = source): string {
  if (provider === "sqlite") return from;
  const text = readFileSync(from, "utf8")
    .replace('provider = "sqlite"', 'provider = "postgresql"')
    .replace('"../server/db/generated/sqlite"', '"../../server/db/generated/postgresql"')
    .replace('url      = "file:./unused.db"', 'url      = "postgresql://unused"');
  const out = join(prismaDir, ".generated", from === source ? "postgresql.prisma" : "postgresql-previous.prisma");
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, text);
  return out;
}

function prisma(args: string[], provider: Provider = "sqlite"): string {
  // Any existing file satisfies the CLI's check for native engines; the WebAssembly ones run.
  const env = {
    ...process.env,
    PRISMA_SCHEMA_ENGINE_BINARY: process.env.PRISMA_SCHEMA_ENGINE_BINARY ?? source,
    PRISMA_QUERY_ENGINE_LIBRARY: process.env.PRISMA_QUERY_ENGINE_LIBRARY ?? source,
    PRISMA_HIDE_UPDATE_MESSAGE: "1",
    CHECKPOINT_DISABLE: "1",
    QUIVER_PRISMA_PROVIDER: provider,
    // Diffs between schema files read no tables, but the PostgreSQL adapter still connects.
    QUIVER_PRISMA_URL:
      provider === "sqlite"
        ? "file:" + join(tmpdir(), "quiver-prisma-cli.db")
        : (process.env.QUIVER_PRISMA_PG_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres"),
  };
  const bin = join(root, "node_modules", ".bin", "prisma");
  return execFileSync(bin, [...args, "--config", join(prismaDir, "prisma.config.ts")], {
    cwd: root,
    env,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  });
}

function generate(): void {
  for (const provider of providers) prisma(["generate", "--no-hints", "--schema", schemaFor(provider)]);
}

// The schema as of the last migration: new migrations are the diff from it to the source, with
// no database in between (the CLI cannot replay migrations through a driver adapter: it runs each
// multi-statement file as one prepared statement).
const snapshot = join(prismaDir, "migrations", "schema.prisma");

function newMigration(name: string): void {
  if (!/^[a-z0-9_]+$/.test(name)) throw new Error("migration name: lowercase letters, digits and _ only");
  const stamp = new Date().toISOString().replace(/\D/g, "").slice(0, 14);
  let wrote = false;
  for (const provider of providers) {
    const from = existsSync(snapshot) ? ["--from-schema-datamodel", schemaFor(provider, snapshot)] : ["--from-empty"];
    const sql = prisma(
      ["migrate", "diff", ...from, "--to-schema-datamodel", schemaFor(provider), "--script"],
      provider,
    );
    if (!sql.trim() || /^-- This is an empty migration/.test(sql.trim())) {
      console.log(`${provider}: no changes`);
      continue;
    }
    const folder = join(prismaDir, "migrations", provider, `${stamp}_${name}`);
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, "migration.sql"), sql);
    console.log(`${provider}: wrote ${folder}`);
    wrote = true;
  }
  if (wrote) copyFileSync(source, snapshot);
}

const [task, arg] = process.argv.slice(2);
if (task === "generate") generate();
else if (task === "migration" && arg) newMigration(arg);
else {
  console.error("usage: tsx prisma/tasks.ts generate | migration NAME");
  process.exit(2);
}
