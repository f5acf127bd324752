// A preview ticket works once across server instances: each instance has its own ticket service
// (same key, as instances on one database derive it from one secret) and the used nonces live in
// the database, on SQLite and PostgreSQL.
import { describe, expect, it } from "vitest";
import { testDatabases, useTestDb } from "../testing/db";
import { createPreviewTickets, dbUsedTickets } from "./ticket";

const target = { sessionId: "s1", port: 8000, base: "localhost" };

describe.each(testDatabases())("used preview tickets on %s", (provider) => {
  const t = useTestDb(provider);

  it("lets a ticket in once, whichever instance it reaches first", async () => {
    const key = Buffer.alloc(32, 3);
    const [a, b] = [
      createPreviewTickets({ key, used: dbUsedTickets(t.current.db) }),
      createPreviewTickets({ key, used: dbUsedTickets(t.current.db) }),
    ];
    const { ticket } = a.mint("s1", 8000, null);
    // Both at once, as a retried request landing on two instances would.
    const both = await Promise.all([a.redeem(ticket, target), b.redeem(ticket, target)]);
    expect(both.filter((r) => r.ok)).toHaveLength(1);
    expect(both.find((r) => !r.ok)).toEqual({ ok: false, reason: "used" });
    expect(await a.redeem(ticket, target)).toEqual({ ok: false, reason: "used" });
    // Another ticket is its own.
    expect(await b.redeem(b.mint("s1", 8000, null).ticket, target)).toEqual({ ok: true, holder: null });
  });

  it("forgets used tickets once they have expired", async () => {
    let now = Date.now();
    const used = dbUsedTickets(t.current.db, () => now);
    expect(await used.claim("old", now - 1000)).toBe(true);
    expect(await used.claim("fresh", now + 120_000)).toBe(true);
    now += 61_000;
    expect(await used.claim("next", now + 60_000)).toBe(true);
    await expect.poll(() => t.current.db.usedPreviewTicket.count({ where: { nonce: "old" } })).toBe(0);
    expect(await t.current.db.usedPreviewTicket.count()).toBe(2);
  });
});
