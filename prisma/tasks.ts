// Prisma chores without Prisma's native engines (shared/STACK.md): derive the PostgreSQL
// schema from the one source schema, generate both clients, and write new migrations.
//   tsx prisma/tasks.ts generate          both clients (runs on npm install)
//   tsx prisma/tasks.ts migration NAME    a new migration folder for each provider
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, readdirSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const prismaDir = dirname(fileURLToPath(import.meta.url));
const root = dirname(prismaDir);
const source = join(prismaDir, "schema.prisma");
export const providers = ["sqlite", "postgresql"] as const;
type Provider = (typeof providers)[number];

function schemaFor(provider: Provider): string {
  if (provider === "sqlite") return source;
  const text = readFileSync(source, "utf8")
    .replace('provider = "sqlite"', 'provider = "postgresql"')
    .replace('"../server/db/generated/sqlite"', '"../../server/db/generated/postgresql"')
    .replace('url      = "file:./unused.db"', 'url      = "postgresql://unused"');
  const out = join(prismaDir, ".generated", "postgresql.prisma");
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
    QUIVER_PRISMA_URL: provider === "sqlite" ? "file:" + join(tmpdir(), "quiver-prisma-cli.db") : shadowUrl(provider),
  };
  const bin = join(root, "node_modules", ".bin", "prisma");
  return execFileSync(bin, [...args, "--config", join(prismaDir, "prisma.config.ts")], { cwd: root, env, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
}

function generate(): void {
  for (const provider of providers) prisma(["generate", "--no-hints", "--schema", schemaFor(provider)]);
}

function newMigration(name: string): void {
  if (!/^[a-z0-9_]+$/.test(name)) throw new Error("migration name: lowercase letters, digits and _ only");
  const stamp = new Date().toISOString().replace(/\D/g, "").slice(0, 14);
  for (const provider of providers) {
    const dir = join(prismaDir, "migrations", provider);
    mkdirSync(dir, { recursive: true });
    const previous = readdirSync(dir).filter((d) => existsSync(join(dir, d, "migration.sql"))).sort();
    // Diff the schema against the SQL already committed, replayed into an empty in-memory model.
    const from = previous.length ? ["--from-migrations", dir, "--shadow-database-url", shadowUrl(provider)] : ["--from-empty"];
    const sql = prisma(["migrate", "diff", ...from, "--to-schema-datamodel", schemaFor(provider), "--script"], provider);
    if (!sql.trim() || /^-- This is an empty migration/.test(sql.trim())) {
      console.log(`${provider}: no changes`);
      continue;
    }
    const folder = join(dir, `${stamp}_${name}`);
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, "migration.sql"), sql);
    console.log(`${provider}: wrote ${folder}`);
  }
}

function shadowUrl(provider: Provider): string {
  if (provider === "sqlite") return "file:" + join(root, ".quiver-shadow.db");
  return process.env.SHADOW_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/quiver_shadow" /* dropped and rebuilt by Prisma: never a real database */;
}

const [task, arg] = process.argv.slice(2);
if (task === "generate") generate();
else if (task === "migration" && arg) newMigration(arg);
else {
  console.error("usage: tsx prisma/tasks.ts generate | migration NAME");
  process.exit(2);
}
