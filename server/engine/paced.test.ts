// The engine's paced database: concurrent queries run one per turn of the event loop, so I/O
// (tokens on their way to browsers) is served between them even on synchronous SQLite.
import { describe, expect, it } from "vitest";
import { testDatabases, useTestDb } from "../testing/db";
import { pacedDb } from "./paced";

describe.each(testDatabases())("paced database on %s", (provider) => {
  const t = useTestDb(provider);

  it("starts concurrent queries in different turns of the event loop, and returns their results", async () => {
    let turns = 0;
    let stop = false;
    const count = () => {
      turns++;
      if (!stop) setImmediate(count);
    };
    setImmediate(count);
    // Where each query reaches the database (on SQLite also where it ends: the driver is synchronous).
    const startedAt: number[] = [];
    // (Prisma runs the extension added first outermost: pacing, then this.)
    const db = pacedDb(t.current.db).$extends({
      query: {
        $allOperations({ args, query }) {
          startedAt.push(turns);
          return query(args);
        },
      },
    });
    const results = await Promise.all(Array.from({ length: 10 }, () => db.session.count()));
    stop = true;
    expect(results).toEqual(Array.from({ length: 10 }, () => 0));
    expect(new Set(startedAt).size).toBe(10);
  });

  it("keeps a batch transaction whole", async () => {
    const db = pacedDb(t.current.db);
    const [a, b] = await db.$transaction([db.org.create({ data: { slug: "paced-a", name: "A" } }), db.org.create({ data: { slug: "paced-b", name: "B" } })]);
    expect([a.slug, b.slug]).toEqual(["paced-a", "paced-b"]);
    await expect(db.$transaction([db.org.create({ data: { slug: "paced-c", name: "C" } }), db.org.create({ data: { slug: "paced-a", name: "dup" } })])).rejects.toThrow();
    expect(await t.current.db.org.count({ where: { slug: "paced-c" } })).toBe(0);
  });
});
