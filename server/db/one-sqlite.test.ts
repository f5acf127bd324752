// SQLite's locks are per library copy: two copies of better-sqlite3 in one process writing the
// same file corrupt it (sqlite.org/howtocorrupt.html, 2.2.1). Prisma's adapter and our own
// writers (event rows, spill bytes, migrations) must load the same copy, so package.json pins
// better-sqlite3 to the version the adapter asks for and npm installs it once.
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";

describe("better-sqlite3", () => {
  it("is installed once: Prisma's adapter and our code load the same copy", () => {
    const require = createRequire(import.meta.url);
    const ours = require.resolve("better-sqlite3");
    const prismas = createRequire(require.resolve("@prisma/adapter-better-sqlite3")).resolve("better-sqlite3");
    expect(prismas).toBe(ours);
  });
});
