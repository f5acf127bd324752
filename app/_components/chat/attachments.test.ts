// Images attached in the message box: which files are taken and what is said of the others,
// and the base64 turns.send gets (the type read from the bytes: server/engine/images.test.ts).
import { describe, expect, it } from "vitest";
import { ATTACHMENT_LIMITS } from "../../../server/protocol/attachments";
import { readImages, screenFiles, toSend } from "./attachments";

const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==",
  "base64",
);
const JPEG = Uint8Array.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46]);
const file = (name: string, type: string, size: number) => ({ name, type, size });

describe("attachments", () => {
  it("refuses other types, too large and empty files before reading them, and says why", () => {
    const { take, refused } = screenFiles(
      [
        file("shot.png", "image/png", 2000),
        file("notes.txt", "text/plain", 10),
        file("logo.svg", "image/svg+xml", 500),
        file("huge.jpg", "image/jpeg", 5 * 1024 * 1024),
        file("blank.png", "image/png", 0),
        file("dropped", "", 100),
      ],
      0,
    );
    expect(take.map((f) => f.name)).toEqual(["shot.png", "dropped"]);
    expect(refused).toEqual([
      "notes.txt is not a PNG, JPEG, GIF or WebP image",
      "logo.svg is not a PNG, JPEG, GIF or WebP image",
      "huge.jpg is 5 MB; an image may be at most 3.75 MB",
      "blank.png is empty",
    ]);
    // Exactly the limit is allowed.
    expect(screenFiles([file("edge.png", "image/png", ATTACHMENT_LIMITS.maxImageBytes)], 0).take).toHaveLength(1);
  });

  it("takes no more than the images a message may hold, counting those already attached", () => {
    const many = Array.from({ length: 4 }, (_, i) => file(`s${i}.png`, "image/png", 100));
    const { take, refused } = screenFiles(many, ATTACHMENT_LIMITS.maxImagesPerMessage - 2);
    expect(take.map((f) => f.name)).toEqual(["s0.png", "s1.png"]);
    expect(refused).toEqual(["at most 8 images per message, so s2.png, s3.png were not attached"]);
    expect(screenFiles(many.slice(0, 1), 8).refused).toEqual([
      "at most 8 images per message, so s0.png was not attached",
    ]);
  });

  it("reads the taken files into base64 with their sniffed type, refusing bytes that are no image", async () => {
    const read = await readImages(
      [
        new File([PNG], "shot.png", { type: "image/png" }),
        new File([JPEG], "photo.png", { type: "image/png" }),
        new File(["hello"], "fake.gif", { type: "image/gif" }),
      ],
      0,
    );
    expect(read.images.map(({ name, mediaType, bytes }) => ({ name, mediaType, bytes }))).toEqual([
      { name: "shot.png", mediaType: "image/png", bytes: PNG.length },
      { name: "photo.png", mediaType: "image/jpeg", bytes: JPEG.length },
    ]);
    expect(read.images[0].base64).toBe(PNG.toString("base64"));
    expect(new Set(read.images.map((i) => i.key)).size).toBe(2);
    expect(read.error).toBe("Not attached: fake.gif is not a PNG, JPEG, GIF or WebP image.");
    expect(toSend(read.images)).toEqual([
      { mediaType: "image/png", base64: PNG.toString("base64") },
      { mediaType: "image/jpeg", base64: Buffer.from(JPEG).toString("base64") },
    ]);
    expect((await readImages([new File([PNG], "ok.png", { type: "image/png" })], 0)).error).toBeUndefined();
  });
});
