// Database errors said so a person can act on them (issue 24, item 7): a server started on a
// read-only data folder, and a query a full disk refuses, name what failed, where, and what to
// do, instead of "SqliteError: unable to open database file" with a stack, or Prisma's
// "Invalid `prisma.session.create()` invocation…".
import { spawn } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mountTmpfs, tmpfsRefusal } from "../testing/tmpfs";
import { databaseFault, databaseLocation } from "./faults";
import { openDb } from "./index";

const root = resolve(import.meta.dirname, "../..");

function startServer(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, ["--import", "tsx", "server/main.ts"], {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (d) => (stderr += d));
    // A server that fails at start still loads its modules first: 45 s at load 19 on 2 cores.
    const timer = setTimeout(() => child.kill("SIGKILL"), 85_000);
    child.on("exit", (code) => {
      clearTimeout(timer);
      done({ code, stderr });
    });
  });
}

describe("database faults, said plainly", () => {
  it("maps driver errors by kind, with where the database is", () => {
    expect(
      databaseFault(Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL" }), "file:/nowhere/q.db")
        ?.message,
    ).toBe(
      "The database cannot be written: the disk is full (/nowhere/q.db). Free space on that disk; the server goes on once it can write.",
    );
    expect(
      databaseFault(
        Object.assign(new Error("cannot execute INSERT in a read-only transaction"), { code: "25006" }),
        "postgresql://u:secret@db.example:5433/quiver",
      )?.message,
    ).toMatch(
      /^The database is read-only: it refuses writes \(PostgreSQL database quiver on db\.example:5433\)\. Make it writable again/,
    );
    // Prisma's own wording of a PostgreSQL refusal.
    const prisma = Object.assign(
      new Error(
        "\nInvalid `prisma.session.create()` invocation:\n\n\nRaw query failed. Code: `25006`. Message: `cannot execute INSERT in a read-only transaction`",
      ),
      { code: "P2010" },
    );
    expect(databaseFault(prisma, "postgresql://u@h/d")?.message).toMatch(
      /^The database is read-only: it refuses writes \(PostgreSQL database d on h\)/,
    );
    // The password never appears; an ordinary query error is not a fault.
    expect(databaseLocation("postgresql://u:secret@h/d")).not.toContain("secret");
    expect(
      databaseFault(Object.assign(new Error("Unique constraint failed"), { code: "P2002" }), "file:/x.db"),
    ).toBeUndefined();
    // Prisma's closed-transaction error is a fault only when the folder says so (a full disk on
    // the real tmpfs below); an interactive transaction that timed out is not.
    expect(
      databaseFault(
        Object.assign(
          new Error(
            "Transaction API error: Transaction already closed: A rollback cannot be executed on a committed transaction.",
          ),
          { code: "P2028" },
        ),
        "file:/nowhere/q.db",
      ),
    ).toBeUndefined();
  });
});

const refusal = tmpfsRefusal();
if (refusal) console.warn(`faults.test: SKIPPED the tmpfs cases: ${refusal}`);

describe.skipIf(refusal !== undefined)("database faults on a real tmpfs", () => {
  let mount: Exclude<ReturnType<typeof mountTmpfs>, string>;
  beforeAll(() => {
    mount = mountTmpfs("4m") as typeof mount;
  });
  afterAll(() => {
    try {
      mount.remount("rw");
    } catch {
      /* already */
    }
    mount.unmount();
  });

  it("a server started on a read-only data folder says so in one line, with the path", async () => {
    const data = join(mount.dir, "ro-data");
    mkdirSync(join(data, "workspace"), { recursive: true });
    mount.remount("ro");
    try {
      const { code, stderr } = await startServer({
        QUIVER_DATA_DIR: data,
        QUIVER_LOCAL_RUNNER: "0",
        PORT: "0",
        DATABASE_URL: "",
      });
      expect(code).toBe(1);
      const lines = stderr.trim().split("\n");
      expect(lines, stderr).toHaveLength(1);
      expect(lines[0]).toBe(
        `quiver: The database is read-only: its file or folder cannot be written (${join(data, "quiver.db")}). Make it writable again (remount it read-write, or give the server's user write permission).`,
      );
    } finally {
      mount.remount("rw");
    }
  }, 90_000);

  it("a server whose data folder cannot be created says so in one line, with the path", async () => {
    mount.remount("ro");
    try {
      const data = join(mount.dir, "not-there");
      const { code, stderr } = await startServer({
        QUIVER_DATA_DIR: data,
        QUIVER_LOCAL_RUNNER: "0",
        PORT: "0",
        DATABASE_URL: "",
      });
      expect(code).toBe(1);
      expect(stderr.trim()).toBe(
        `quiver: cannot write ${data}: the file system is read-only. Set QUIVER_DATA_DIR (or QUIVER_WORKSPACE) to a folder the server may write.`,
      );
    } finally {
      mount.remount("rw");
    }
  }, 90_000);

  it("a query the full disk refuses reaches the caller as the reason and the path, not Prisma's text", async () => {
    const file = join(mount.dir, "full.db");
    const handle = await openDb(`file:${file}`, { thread: true });
    try {
      await handle.db.user.create({ data: { email: "first@test.invalid", name: "First" } });
      try {
        writeFileSync(join(mount.dir, "fill"), Buffer.alloc(8 * 1024 * 1024));
      } catch {
        /* ENOSPC: full now */
      }
      const refused = await handle.db.user.create({ data: { email: "a@test.invalid", name: "A" } }).then(
        () => undefined,
        (e: Error) => e,
      );
      expect(refused?.message).toBe(
        `The database cannot be written: the disk is full (${file}). Free space on that disk; the server goes on once it can write.`,
      );
      expect(refused?.message).not.toContain("prisma");
      // updateMany runs in Prisma's own transaction, whose refused COMMIT surfaces only as its
      // failed rollback (P2028, no SQLite code): answering a card on a full disk showed that text.
      const many = await handle.db.user.updateMany({ data: { name: "B".repeat(20_000) } }).then(
        () => undefined,
        (e: Error) => e,
      );
      expect(many?.message).toBe(
        `The database cannot be written: the disk is full (${file}). Free space on that disk; the server goes on once it can write.`,
      );
      // Once space is back the same client writes again, transactions included: the refused
      // COMMIT left Prisma's SQLite adapter holding its transaction lock, so every later
      // updateMany waited forever (an approval answered after the disk filled never returned).
      rmSync(join(mount.dir, "fill"));
      const timeout = new Promise((r) => setTimeout(() => r("still waiting after 10 s"), 10_000));
      expect(await Promise.race([handle.db.user.updateMany({ data: { name: "C" } }), timeout])).toEqual({ count: 1 });
      expect(
        await Promise.race([
          handle.db.$transaction([
            handle.db.user.create({ data: { email: "b@test.invalid", name: "B" } }),
            handle.db.user.count(),
          ]),
          timeout,
        ]),
      ).toEqual([expect.objectContaining({ name: "B" }), 2]);
      expect((await handle.db.user.findMany({ orderBy: { email: "asc" } })).map((u) => u.name)).toEqual(["B", "C"]);
    } finally {
      rmSync(join(mount.dir, "fill"), { force: true });
      await handle.close();
    }
  });
});
