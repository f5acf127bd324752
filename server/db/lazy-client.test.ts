// The client made on first use (lazy-client.ts) against a real migrated SQLite database.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDb, type TestDb } from "../testing/db";
import { connectDb, type Db } from "./index";
import { lazyClient } from "./lazy-client";

describe("lazyClient", () => {
  let t: TestDb & { dispose(): Promise<void> };
  beforeAll(async () => {
    t = await createTestDb("sqlite");
  });
  afterAll(() => t?.dispose());

  const counting = () => {
    const made: Db[] = [];
    const db = lazyClient(async () => {
      const c = await connectDb(t.url);
      made.push(c);
      return c;
    });
    return { db, made };
  };

  it("connects only when first used, once for calls made together, and a stop before any use connects nothing", async () => {
    const unused = counting();
    await unused.db.$disconnect();
    expect(unused.made).toHaveLength(0);

    const { db, made } = counting();
    expect(made).toHaveLength(0);
    const [users, sessions] = await Promise.all([db.user.count(), db.session.findMany({ take: 1 })]);
    expect(users).toBeGreaterThanOrEqual(0);
    expect(sessions).toEqual([]);
    expect(made).toHaveLength(1);
    await db.$disconnect();
  });

  it("runs model operations, raw queries and interactive transactions, rollback included", async () => {
    const { db } = counting();
    const user = await db.user.create({ data: { email: "lazy@example.com", name: "Lazy" } });
    expect(await db.user.findUnique({ where: { id: user.id } })).toMatchObject({ email: "lazy@example.com" });
    expect(await db.$queryRawUnsafe<{ n: bigint }[]>("SELECT 1 AS n")).toEqual([{ n: 1n }]);
    await expect(
      db.$transaction(async (tx) => {
        await tx.user.update({ where: { id: user.id }, data: { name: "Changed" } });
        throw new Error("undo");
      }),
    ).rejects.toThrow("undo");
    expect((await db.user.findUniqueOrThrow({ where: { id: user.id } })).name).toBe("Lazy");
    await db.$transaction(async (tx) => tx.user.update({ where: { id: user.id }, data: { name: "Kept" } }));
    expect((await t.db.user.findUniqueOrThrow({ where: { id: user.id } })).name).toBe("Kept");
    await db.$disconnect();
  });

  it("refuses the batch form of $transaction, saying why, and tries a failed connection again", async () => {
    const { db } = counting();
    await expect(db.$transaction([db.user.count()] as never)).rejects.toThrow(/pass \$transaction a function/);
    let attempts = 0;
    const flaky = lazyClient(async () => {
      if (++attempts === 1) throw new Error("not yet");
      return connectDb(t.url);
    });
    await expect(flaky.user.count()).rejects.toThrow("not yet");
    expect(await flaky.user.count()).toBeGreaterThanOrEqual(1);
    expect(attempts).toBe(2);
    await flaky.$disconnect();
    await db.$disconnect();
  });
});
