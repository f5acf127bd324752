// node-postgres is loaded on first use only: a server on SQLite (its whole module graph
// imported, its database opened and queried) never loads it, and its first use loads it.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const server = join(import.meta.dirname, "..");

function run(script: string): Promise<string> {
  const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  return new Promise((resolve, reject) =>
    child.once("exit", (code) => (code === 0 ? resolve(out.trim()) : reject(new Error(`exit ${code}: ${out}`)))),
  );
}

describe("node-postgres on SQLite", () => {
  it("is not loaded by the server's modules nor a SQLite database, and is by its first use", async () => {
    const dir = mkdtempSync(join(tmpdir(), "quiver-lazy-pg-"));
    try {
      const out = await run(`
        import { createRequire } from "node:module";
        await import(${JSON.stringify(join(server, "app.ts"))});
        const { openDb } = await import(${JSON.stringify(join(server, "db", "index.ts"))});
        const { loadPg } = await import(${JSON.stringify(join(server, "db", "driver.ts"))});
        const loaded = () => Object.keys(createRequire(import.meta.url).cache).some((f) => f.includes("/node_modules/pg/"));
        const db = await openDb(${JSON.stringify(`file:${join(dir, "q.db")}`)});
        await db.db.session.count();
        const before = loaded();
        loadPg();
        console.log(JSON.stringify({ before, after: loaded() }));
        await db.close();
      `);
      expect(JSON.parse(out)).toEqual({ before: false, after: true });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
