// A long output read page by page by a share-link viewer: each page is redacted with the text
// around it, so a key or token across a page's edge never shows, whatever the page size and
// offset; the owner reads the bytes as stored.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testDatabases, useTestDb } from "../../testing/db";
import { seedSession } from "../../testing/hub";
import { createSpillStore } from "../../services/spills";
import { createSessionService } from "../../services/sessions";
import type { Services } from "../../services/types";
import { appRouter } from "../root";
import { contextFor } from "../context";
import { leaks, SECRET_CASES } from "../../auth/secrets.testdata";

describe.each(testDatabases().slice(0, 1))("a spilled output read in pages on %s", (provider) => {
  const t = useTestDb(provider);
  let spills: ReturnType<typeof createSpillStore>;
  let sessionId: string;
  let ref: string;
  let text: string;
  let viewer: ReturnType<typeof appRouter.createCaller>;
  let owner: ReturnType<typeof appRouter.createCaller>;

  beforeAll(async () => {
    const seeded = await seedSession(t.current.db);
    sessionId = seeded.sessionId;
    spills = createSpillStore(t.current.db, t.current.url);
    const services = {
      db: t.current.db,
      dbProvider: provider,
      spills,
      sessions: createSessionService(t.current.db),
    } as unknown as Services;
    text = `${"filler line of output\n".repeat(200)}${SECRET_CASES.map((c) => c.text).join("\n")}\n${"more output\n".repeat(200)}`;
    ref = (await spills.store({ sessionId, bytes: Buffer.from(text) })).ref;
    viewer = appRouter.createCaller(
      contextFor(services, { kind: "viewer", sessionId, linkId: "sl0", expiresAt: null }),
    );
    owner = appRouter.createCaller(
      contextFor(services, {
        kind: "owner",
        via: "loopback",
        actor: { userId: seeded.userId, orgId: seeded.orgId, role: "owner" },
      }),
    );
  });
  afterAll(async () => {
    await spills?.close();
  });

  it("never shows a secret across a page's edge, at any offset", async () => {
    const start = text.indexOf(SECRET_CASES[0].text);
    const end = start + SECRET_CASES.map((c) => c.text).join("\n").length;
    for (const length of [7, 50]) {
      for (let first = start - length; first < start; first += 1) {
        let joined = "";
        for (let offset = first; offset < end + length; offset += length)
          joined += (await viewer.spills.read({ sessionId, ref, offset, length })).text;
        for (const c of SECRET_CASES)
          expect(leaks(joined, c.secret, 8), `${c.kind}, pages of ${length} from ${first}`).toBeUndefined();
      }
    }
    const own = await owner.spills.read({ sessionId, ref, offset: start, length: end - start });
    expect(own.text).toBe(SECRET_CASES.map((c) => c.text).join("\n"));
  }, 120_000);

  it("reads a spill only under its own session, whoever asks and whichever session they name", async () => {
    // Another org's session, with a spill of its own: its owner, and this session's viewer and owner.
    const other = await seedSession(t.current.db);
    const otherRef = (await spills.store({ sessionId: other.sessionId, bytes: Buffer.from("other org's output") })).ref;
    const services = { db: t.current.db, dbProvider: provider, spills } as unknown as Services;
    const stranger = appRouter.createCaller(
      contextFor(services, {
        kind: "owner",
        via: "account",
        actor: { userId: other.userId, orgId: other.orgId, role: "owner" },
      }),
    );
    const page = { offset: 0, length: 100 };
    // A reference of another session named under one's own session is not found.
    for (const caller of [viewer, owner])
      await expect(caller.spills.read({ sessionId, ref: otherRef, ...page })).rejects.toMatchObject({
        code: "NOT_FOUND",
      });
    await expect(stranger.spills.read({ sessionId: other.sessionId, ref, ...page })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
    // Naming the other session is refused before any spill is looked at.
    for (const caller of [viewer, owner])
      await expect(caller.spills.read({ sessionId: other.sessionId, ref: otherRef, ...page })).rejects.toMatchObject({
        code: expect.stringMatching(/^(FORBIDDEN|NOT_FOUND)$/),
      });
    await expect(stranger.spills.read({ sessionId, ref, ...page })).rejects.toMatchObject({
      code: expect.stringMatching(/^(FORBIDDEN|NOT_FOUND)$/),
    });
    // The model's retrieve_tool_result reads through the store with its own session id only.
    expect(await spills.read(otherRef, { sessionId, ...page })).toBeUndefined();
    expect((await stranger.spills.read({ sessionId: other.sessionId, ref: otherRef, ...page })).text).toBe(
      "other org's output",
    );
  });
});
