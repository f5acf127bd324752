// Attached images end to end: real SDK clients against the fake provider, real SQLite and
// PostgreSQL, the event hub. What the model is sent in each wire format, what is stored and
// announced, and what is refused with nothing stored.
import { describe, expect, it } from "vitest";
import { useTestDb } from "../testing/db";
import { seedSession } from "../testing/hub";
import { eventsUntilFinished, useFakeProvider } from "../testing/engine";
import { EngineError, type Engine } from "./engine";
import { ImageData, prepareImages } from "./images";
import { ATTACHMENT_LIMITS, sniffImage } from "../protocol/attachments";
import { engineCombos, useEngine } from "../testing/engine-suite";

/** A real 1×1 PNG, and bytes of each other kind's signature. */
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGP4z8DwHwAFAAH/iZk9HQAAAABJRU5ErkJggg==";
const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46]).toString("base64");
const GIF = Buffer.from("GIF89a\x01\x00\x01\x00").toString("base64");
const WEBP = Buffer.from("RIFF\x10\x00\x00\x00WEBPVP8 ").toString("base64");

describe("image checks", () => {
  it("knows the four kinds by their bytes, whatever the browser called them", () => {
    expect([PNG, JPEG, GIF, WEBP].map((b) => sniffImage(Buffer.from(b, "base64")))).toEqual([
      "image/png",
      "image/jpeg",
      "image/gif",
      "image/webp",
    ]);
    for (const other of ["RIFF\x10\x00\x00\x00WAVEfmt ", "<svg xmlns=", "GIF8", ""])
      expect(sniffImage(Buffer.from(other, "latin1"))).toBeUndefined();
    const [png] = prepareImages([{ mediaType: "image/jpeg", base64: PNG }]);
    expect(png).toMatchObject({ mediaType: "image/png", sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
  });

  it("refuses bytes that are no image, too large an image and too many, saying which and why", () => {
    expect(() =>
      prepareImages([
        { mediaType: "image/png", base64: PNG },
        { mediaType: "image/png", base64: Buffer.from("hello, not an image").toString("base64") },
      ]),
    ).toThrow(/Image 2 is not a PNG, JPEG, GIF, WEBP image/);
    const big = Buffer.alloc(ATTACHMENT_LIMITS.maxImageBytes + 1);
    Buffer.from(PNG, "base64").copy(big);
    expect(() => prepareImages([{ mediaType: "image/png", base64: big.toString("base64") }])).toThrow(
      /Image 1 is 3\.75 MiB; an image may be at most 3\.75 MiB/,
    );
    expect(() =>
      prepareImages(
        Array.from({ length: ATTACHMENT_LIMITS.maxImagesPerMessage + 1 }, () => ({
          mediaType: "image/png" as const,
          base64: PNG,
        })),
      ),
    ).toThrow(/At most 8 images/);
  });

  it("reads each image once and keeps it within its budget, most recently used first", async () => {
    const reads: string[][] = [];
    const rows = {
      images: async (_s: string, ids: string[]) => (
        reads.push(ids),
        ids.map((id) => ({ id, mediaType: "image/png", base64: id.repeat(10) }))
      ),
    };
    const data = new ImageData(rows, 25);
    const msg = (...ids: string[]) => [
      {
        role: "user" as const,
        content: ids.map((id) => ({ type: "image" as const, attachmentId: id, mediaType: "image/png" })),
      },
    ];
    const [filled] = await data.fill("s", msg("a", "b"));
    expect(filled.content).toEqual([
      expect.objectContaining({ attachmentId: "a", data: "a".repeat(10) }),
      expect.objectContaining({ attachmentId: "b", data: "b".repeat(10) }),
    ]);
    await data.fill("s", msg("a", "b"));
    await data.fill("s", msg("c"));
    await data.fill("s", msg("c", "b"));
    await data.fill("s", msg("a"));
    // a, b: read once; c read, evicting a (the least recent) at 30 chars; a read again.
    expect(reads).toEqual([["a", "b"], ["c"], ["a"]]);
  });
});

const combos = engineCombos();

describe.each(combos)("attached images on %s with the %s wire format", (dbProvider, kind) => {
  const t = useTestDb(dbProvider);
  const provider = useFakeProvider();
  const suite = useEngine(t, kind, provider);

  const turn = async (
    sessionId: string,
    userId: string,
    text: string,
    images?: Parameters<Engine["sendMessage"]>[3],
  ) => {
    const after = await suite.hub.lastSeq(sessionId);
    const { turnId } = await suite.engine.sendMessage(sessionId, { userId }, text, images);
    return eventsUntilFinished(suite.hub, sessionId, turnId, after);
  };
  /** The user messages of a recorded request, as the wire format has them, without Anthropic's
   *  cache breakpoints (they move to the latest turn from one request to the next). */
  const userMessages = (i: number) =>
    (
      JSON.parse(
        JSON.stringify(provider.current.requests[i].body, (k, v: unknown) => (k === "cache_control" ? undefined : v)),
      ) as { messages: { role: string; content: unknown }[] }
    ).messages.filter((m) => m.role === "user");

  it("sends the image with the text, in every later request too, and says so in message.user", async () => {
    const { sessionId, userId } = await seedSession(t.current.db);
    provider.current.enqueue(
      { blocks: [{ type: "text", text: "A red dot." }] },
      { blocks: [{ type: "text", text: "Still a red dot." }] },
    );
    const events = await turn(sessionId, userId, "what is this?", [{ mediaType: "image/png", base64: PNG }]);
    const user = events.find((e) => e.type === "message.user");
    expect(user).toMatchObject({
      text: "what is this?",
      images: [{ id: expect.any(String), mediaType: "image/png", bytes: Buffer.from(PNG, "base64").length }],
    });
    const expected =
      kind === "anthropic"
        ? [
            { type: "text", text: "what is this?" },
            { type: "image", source: { type: "base64", media_type: "image/png", data: PNG } },
          ]
        : [
            { type: "text", text: "what is this?" },
            { type: "image_url", image_url: { url: `data:image/png;base64,${PNG}` } },
          ];
    expect(userMessages(0)[0].content).toEqual(expected);

    await turn(sessionId, userId, "and now?");
    // The next request repeats the first message as it was (the prompt cache's prefix).
    expect(JSON.stringify(userMessages(1)[0])).toBe(JSON.stringify(userMessages(0)[0]));
    expect(JSON.stringify(userMessages(1)[1].content)).toContain("and now?");
  });

  it("sends an image alone, and the same image again by its id (Retry), storing it once", async () => {
    const { sessionId, userId } = await seedSession(t.current.db);
    provider.current.enqueue({ blocks: [{ type: "text", text: "one" }] }, { blocks: [{ type: "text", text: "two" }] });
    const first = await turn(sessionId, userId, "", [{ mediaType: "image/png", base64: PNG }]);
    const ref = first.find((e) => e.type === "message.user")!;
    const id = (ref as { images: { id: string }[] }).images[0].id;
    const again = await turn(sessionId, userId, "once more", [{ attachmentId: id }]);
    expect(again.find((e) => e.type === "message.user")).toMatchObject({ images: [{ id, mediaType: "image/png" }] });
    expect(await t.current.db.attachment.count({ where: { sessionId } })).toBe(1);
    const lastUser = userMessages(1).at(-1)!.content as { type: string }[];
    expect(lastUser.map((b) => b.type)).toEqual(kind === "anthropic" ? ["text", "image"] : ["text", "image_url"]);
    expect(await t.current.rows.images(sessionId, [id])).toEqual([{ id, mediaType: "image/png", base64: PNG }]);
  });

  it("refuses another session's image and bytes that are no image, storing nothing and starting no turn", async () => {
    const a = await seedSession(t.current.db);
    const b = await seedSession(t.current.db);
    provider.current.enqueue({ blocks: [{ type: "text", text: "ok" }] });
    const first = await turn(a.sessionId, a.userId, "look", [{ mediaType: "image/png", base64: PNG }]);
    const id = (first.find((e) => e.type === "message.user") as { images: { id: string }[] }).images[0].id;

    const foreign = suite.engine.sendMessage(b.sessionId, { userId: b.userId }, "steal", [
      { mediaType: "image/png", base64: PNG },
      { attachmentId: id },
    ]);
    await expect(foreign).rejects.toThrow(EngineError);
    await expect(foreign).rejects.toThrow(/No image .* in this session/);
    await expect(
      suite.engine.sendMessage(b.sessionId, { userId: b.userId }, "x", [
        { mediaType: "image/png", base64: Buffer.from("plain text").toString("base64") },
      ]),
    ).rejects.toThrow(/is not a PNG/);
    // The new image sent beside the foreign one was rolled back with the turn.
    expect(await t.current.db.attachment.count({ where: { sessionId: b.sessionId } })).toBe(0);
    expect(await t.current.db.turn.count({ where: { sessionId: b.sessionId } })).toBe(0);
    expect(await t.current.db.message.count({ where: { sessionId: b.sessionId } })).toBe(0);
    expect(await t.current.rows.images(b.sessionId, [id])).toEqual([]);
    expect(suite.engine.isRunning(b.sessionId)).toBe(false);
  });
});
