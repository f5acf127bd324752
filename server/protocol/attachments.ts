// Images a person attaches to a message (pasted, dropped or picked in the chat box): what
// `turns.send` takes, what the `message.user` event says of them, and the limits both sides
// check. The bytes live in the Attachment table; messages and events carry only references.
import { z } from "zod";

/** The media types both providers take as image input. */
export const IMAGE_MEDIA_TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp"] as const;
export const ImageMediaType = z.enum(IMAGE_MEDIA_TYPES);
export type ImageMediaType = z.infer<typeof ImageMediaType>;

export const ATTACHMENT_LIMITS = {
  /** Bytes of one image: Anthropic refuses an image whose base64 exceeds 5 MiB (3.75 MiB of bytes). */
  maxImageBytes: 3_932_160,
  /** Images in one message. */
  maxImagesPerMessage: 8,
} as const;

/** The media type the bytes' signature says, or none when they are none of the four. Both ends
 *  go by the bytes: a file's own type comes from its name (a JPEG saved as .png), and the
 *  providers refuse an image whose bytes disagree with its declared type. */
export function sniffImage(bytes: Uint8Array): ImageMediaType | undefined {
  const at = (i: number, sig: string | number[]) =>
    [...(typeof sig === "string" ? Array.from(sig, (c) => c.charCodeAt(0)) : sig)].every((v, j) => bytes[i + j] === v);
  if (at(0, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return "image/png";
  if (at(0, [0xff, 0xd8, 0xff])) return "image/jpeg";
  if (at(0, "GIF87a") || at(0, "GIF89a")) return "image/gif";
  if (at(0, "RIFF") && at(8, "WEBP")) return "image/webp";
  return undefined;
}

/** Base64 length of `bytes` bytes (padded). */
const base64Length = (bytes: number) => 4 * Math.ceil(bytes / 3);

/** One image of a message being sent: new bytes, or an image already attached in this session
 *  (Retry sends the same message again without uploading it twice). */
export const SendImage = z.union([
  z.object({
    mediaType: ImageMediaType,
    base64: z
      .string()
      .min(4)
      .max(
        base64Length(ATTACHMENT_LIMITS.maxImageBytes),
        `An image may be at most ${ATTACHMENT_LIMITS.maxImageBytes / 1024 / 1024} MiB.`,
      )
      .regex(/^[A-Za-z0-9+/]+={0,2}$/, "The image is not base64."),
  }),
  z.object({ attachmentId: z.string().min(1).max(64) }),
]);
export type SendImage = z.infer<typeof SendImage>;

export const SendImages = z
  .array(SendImage)
  .max(ATTACHMENT_LIMITS.maxImagesPerMessage, `At most ${ATTACHMENT_LIMITS.maxImagesPerMessage} images per message.`);

/** An image of a stored message, as events and the chat name it. */
export const ImageRef = z.object({ id: z.string(), mediaType: ImageMediaType, bytes: z.number().int().nonnegative() });
export type ImageRef = z.infer<typeof ImageRef>;
