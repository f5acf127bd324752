// Images a person attaches to a message: checked before the turn begins (the bytes must be the
// image they claim to be, within the providers' limits), stored with the message as Attachment
// rows, and read back into the conversation for each request. Requests of a session send the
// same images again and again, so their bytes are kept in memory up to a budget.
import { createHash } from "node:crypto";
import type { BeginImage, TurnRows } from "../db";
import { rowId } from "../db/row-id";
import { ATTACHMENT_LIMITS, IMAGE_MEDIA_TYPES, sniffImage, type SendImage } from "../protocol/attachments";
import type { ConversationMessage } from "./types";

export class ImageError extends Error {}

/** The images of a message as `begin` stores them. The type is the one the bytes carry (a
 *  browser may label a file by its name); bytes that are no image of the four are refused. */
export function prepareImages(images: SendImage[]): BeginImage[] {
  if (images.length > ATTACHMENT_LIMITS.maxImagesPerMessage)
    throw new ImageError(`At most ${ATTACHMENT_LIMITS.maxImagesPerMessage} images per message.`);
  return images.map((image, i) => {
    if ("attachmentId" in image) return { reuse: image.attachmentId };
    const bytes = new Uint8Array(Buffer.from(image.base64, "base64"));
    const which = `Image ${i + 1}`;
    if (bytes.byteLength > ATTACHMENT_LIMITS.maxImageBytes) {
      throw new ImageError(
        `${which} is ${mib(bytes.byteLength)} MiB; an image may be at most ${mib(ATTACHMENT_LIMITS.maxImageBytes)} MiB.`,
      );
    }
    const mediaType = sniffImage(bytes);
    if (!mediaType)
      throw new ImageError(
        `${which} is not a ${IMAGE_MEDIA_TYPES.map((t) => t.slice(6).toUpperCase()).join(", ")} image (its bytes say otherwise).`,
      );
    return { id: rowId(), mediaType, bytes, sha256: createHash("sha256").update(bytes).digest("hex") };
  });
}

const mib = (n: number) => (n / 1024 / 1024).toFixed(2).replace(/\.?0+$/, "");

/** What a request says in place of an image whose bytes are gone (never expected: they are kept with the session). */
export const MISSING_IMAGE = "[An image the user attached is no longer available.]";

/**
 * Fills `data` into the conversation's image blocks. Attachments never change, so their base64
 * is kept by id, most recently used first, up to `budgetChars` in all.
 */
export class ImageData {
  private readonly cache = new Map<string, { mediaType: string; base64: string }>();
  private chars = 0;
  constructor(
    private readonly rows: Pick<TurnRows, "images">,
    private readonly budgetChars = 64 * 1024 * 1024,
  ) {}

  async fill(sessionId: string, messages: ConversationMessage[]): Promise<ConversationMessage[]> {
    const wanted = new Set<string>();
    for (const m of messages) for (const b of m.content) if (b.type === "image") wanted.add(b.attachmentId);
    if (wanted.size === 0) return messages;
    const missing = [...wanted].filter((id) => !this.cache.has(id));
    const loaded = new Map((missing.length ? await this.rows.images(sessionId, missing) : []).map((r) => [r.id, r]));
    const found = (id: string) => {
      const hit = this.cache.get(id) ?? loaded.get(id);
      if (hit) this.keep(id, hit);
      return hit;
    };
    return messages.map((m) =>
      m.content.some((b) => b.type === "image")
        ? {
            role: m.role,
            content: m.content.map((b) => (b.type === "image" ? { ...b, data: found(b.attachmentId)?.base64 } : b)),
          }
        : m,
    );
  }

  private keep(id: string, entry: { mediaType: string; base64: string }) {
    if (this.cache.delete(id)) this.chars -= entry.base64.length;
    if (entry.base64.length > this.budgetChars) return;
    this.cache.set(id, entry);
    this.chars += entry.base64.length;
    for (const [oldest, e] of this.cache) {
      if (this.chars <= this.budgetChars) break;
      this.cache.delete(oldest);
      this.chars -= e.base64.length;
    }
  }
}
