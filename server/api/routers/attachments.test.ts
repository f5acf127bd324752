// Images through the API as the IDE uses it: turns.send with an image, attachments.read of its
// bytes by the owner and by a share-link viewer (unredacted: base64 is no text to redact),
// and the errors a bad image or a foreign id gets. Real databases, the engine against the fake
// provider.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { testDatabases, useTestDb } from "../../testing/db";
import { createEventHub, type EventHub } from "../../hub/events";
import { seedSession } from "../../testing/hub";
import { createEngine, type Engine } from "../../engine/engine";
import { startFakeProvider, type FakeProvider } from "../../engine/fake-provider/server";
import { fastRetries, testDispatcher } from "../../testing/engine";
import { createSessionService } from "../../services/sessions";
import type { Services } from "../../services/types";
import { contextFor } from "../context";
import { appRouter } from "../root";

const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGP4z8DwHwAFAAH/iZk9HQAAAABJRU5ErkJggg==",
  "base64",
);
/** A PNG whose base64 holds what the viewer's redaction takes for an AWS key (PNG readers
 *  ignore bytes after the image's end). */
const TRICKY = Buffer.concat([
  PNG,
  Buffer.alloc((3 - (PNG.length % 3)) % 3),
  Buffer.from("+AKIAABCDEFGHIJKLMNOP+AA", "base64"),
]).toString("base64");

describe.each(testDatabases())("attachments through the API on %s", (dbProvider) => {
  const t = useTestDb(dbProvider);
  let fake: FakeProvider;
  let hub: EventHub;
  let engine: Engine;
  let services: Services;

  beforeAll(async () => {
    fake = await startFakeProvider();
  });
  afterAll(() => fake.close());
  beforeEach(() => {
    hub = createEventHub(t.current.db, { url: t.current.url });
    engine = createEngine({
      db: t.current.db,
      rows: t.current.rows,
      hub,
      dispatcher: testDispatcher(),
      retry: fastRetries,
      systemPrompt: "S",
      env: { QUIVER_PROVIDER: "anthropic", ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: fake.anthropicBaseURL },
    });
    services = {
      db: t.current.db,
      dbProvider,
      sessions: createSessionService(t.current.db),
      engine,
      hub,
      attachments: t.current.rows,
    } as unknown as Services;
  });
  afterEach(async () => {
    await engine.dispose();
    await hub.dispose();
  });

  const owner = (s: { userId: string; orgId: string }) =>
    appRouter.createCaller(
      contextFor(services, {
        kind: "owner",
        via: "loopback",
        actor: { userId: s.userId, orgId: s.orgId, role: "owner" },
      }),
    );

  it("stores the image with the message and gives its bytes back to the owner and to a viewer, untouched", async () => {
    expect(TRICKY).toMatch(/\+AKIAABCDEFGHIJKLMNOP\+/);
    const s = await seedSession(t.current.db);
    fake.enqueue({ blocks: [{ type: "text", text: "seen" }] });
    await owner(s).turns.send({
      sessionId: s.sessionId,
      text: "",
      images: [{ mediaType: "image/png", base64: TRICKY }],
    });
    await engine.settled(s.sessionId);
    const [row] = await t.current.db.attachment.findMany({
      where: { sessionId: s.sessionId },
      select: { id: true, size: true },
    });
    expect(row.size).toBe(Buffer.from(TRICKY, "base64").length);

    const mine = await owner(s).attachments.read({ sessionId: s.sessionId, id: row.id });
    expect(mine).toEqual({ id: row.id, mediaType: "image/png", bytes: row.size, base64: TRICKY });
    const viewer = appRouter.createCaller(
      contextFor(services, { kind: "viewer", sessionId: s.sessionId, linkId: "sl0", expiresAt: null }),
    );
    expect((await viewer.attachments.read({ sessionId: s.sessionId, id: row.id })).base64).toBe(TRICKY);
    await expect(owner(s).attachments.read({ sessionId: s.sessionId, id: "nope" })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
  });

  it("answers BAD_REQUEST, saying why, for an empty message, bytes that are no image and another session's image", async () => {
    const a = await seedSession(t.current.db);
    const b = await seedSession(t.current.db);
    fake.enqueue({ blocks: [{ type: "text", text: "ok" }] });
    await owner(a).turns.send({
      sessionId: a.sessionId,
      text: "x",
      images: [{ mediaType: "image/png", base64: PNG.toString("base64") }],
    });
    await engine.settled(a.sessionId);
    const [{ id }] = await t.current.db.attachment.findMany({ where: { sessionId: a.sessionId } });

    await expect(owner(b).turns.send({ sessionId: b.sessionId, text: "  " })).rejects.toMatchObject({
      code: "BAD_REQUEST",
      message: "The message is empty.",
    });
    await expect(
      owner(b).turns.send({
        sessionId: b.sessionId,
        text: "x",
        images: [{ mediaType: "image/png", base64: Buffer.from("%PDF-1.7").toString("base64") }],
      }),
    ).rejects.toMatchObject({ code: "BAD_REQUEST", message: expect.stringMatching(/Image 1 is not a PNG/) });
    await expect(
      owner(b).turns.send({
        sessionId: b.sessionId,
        text: "x",
        images: [{ mediaType: "image/png", base64: "not base64!" }],
      }),
    ).rejects.toMatchObject({ code: "BAD_REQUEST" });
    await expect(
      owner(b).turns.send({ sessionId: b.sessionId, text: "x", images: [{ attachmentId: id }] }),
    ).rejects.toMatchObject({ code: "BAD_REQUEST", message: expect.stringMatching(/in this session/) });
    await expect(owner(b).attachments.read({ sessionId: b.sessionId, id })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
    expect(await t.current.db.turn.count({ where: { sessionId: b.sessionId } })).toBe(0);
  });
});
