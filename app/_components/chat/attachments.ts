// Images attached to a message before it is sent: which files are taken (an image type both
// providers read, within the size and count limits the server also checks) and what is said
// of the others, the bytes read as base64 and their real type read from the bytes themselves.
import {
  ATTACHMENT_LIMITS,
  IMAGE_MEDIA_TYPES,
  sniffImage,
  type ImageMediaType,
  type SendImage,
} from "../../../server/protocol/attachments";
import { base64Of, sizeLabel } from "../../_lib/bytes";

/** An image in the message box, read and ready to send. */
export interface DraftImage {
  key: string;
  name: string;
  mediaType: ImageMediaType;
  bytes: number;
  base64: string;
}

export const ACCEPT = IMAGE_MEDIA_TYPES.join(",");
const KINDS = "PNG, JPEG, GIF or WebP";

interface FileLike {
  name: string;
  type: string;
  size: number;
}

/** Which of `files` may be read, given `already` images in the message, and why the rest may
 *  not (before any byte is read: a 50 MB video dropped by mistake is never loaded). */
export function screenFiles<F extends FileLike>(
  files: readonly F[],
  already: number,
): { take: F[]; refused: string[] } {
  const take: F[] = [];
  const refused: string[] = [];
  const over: string[] = [];
  for (const f of files) {
    // An empty type (some drops) is judged by the bytes once read.
    if (f.type && !(IMAGE_MEDIA_TYPES as readonly string[]).includes(f.type))
      refused.push(`${f.name} is not a ${KINDS} image`);
    else if (f.size > ATTACHMENT_LIMITS.maxImageBytes)
      refused.push(
        `${f.name} is ${sizeLabel(f.size)}; an image may be at most ${sizeLabel(ATTACHMENT_LIMITS.maxImageBytes)}`,
      );
    else if (f.size === 0) refused.push(`${f.name} is empty`);
    else if (already + take.length >= ATTACHMENT_LIMITS.maxImagesPerMessage) over.push(f.name);
    else take.push(f);
  }
  if (over.length)
    refused.push(
      `at most ${ATTACHMENT_LIMITS.maxImagesPerMessage} images per message, so ${over.join(", ")} ${over.length === 1 ? "was" : "were"} not attached`,
    );
  return { take, refused };
}

let drafted = 0;

/** The files as images for the message, with a sentence for the ones refused (`error`). */
export async function readImages(
  files: readonly File[],
  already: number,
): Promise<{ images: DraftImage[]; error?: string }> {
  const { take, refused } = screenFiles(files, already);
  const images: DraftImage[] = [];
  const unreadable: string[] = [];
  for (const f of take) {
    const bytes = new Uint8Array(await f.arrayBuffer());
    const mediaType = sniffImage(bytes);
    if (!mediaType) unreadable.push(`${f.name} is not a ${KINDS} image`);
    else
      images.push({
        key: `img-${++drafted}`,
        name: f.name || "pasted image",
        mediaType,
        bytes: bytes.length,
        base64: base64Of(bytes),
      });
  }
  const all = [...unreadable, ...refused];
  return { images, error: all.length ? `Not attached: ${all.join("; ")}.` : undefined };
}

/** What turns.send takes for images still in the browser. */
export const toSend = (images: readonly DraftImage[]): SendImage[] =>
  images.map(({ mediaType, base64 }) => ({ mediaType, base64 }));

export const dataUrl = (img: { mediaType: string; base64: string }) => `data:${img.mediaType};base64,${img.base64}`;
