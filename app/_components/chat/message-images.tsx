"use client";
// The images of a sent message, in its bubble: thumbnails whose bytes are read once from the
// server (attachments.read; an attached image never changes), and a click shows one full size
// over the IDE, as an editor's image preview would, closed by Esc or a click.
import { useEffect, useState } from "react";
import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "../../_lib/trpc";
import type { ImageRef } from "../../../server/protocol/attachments";
import { dataUrl } from "./attachments";
import { sizeLabel } from "../../_lib/bytes";
import styles from "./chat.module.css";

const kind = (mediaType: string) => mediaType.replace("image/", "").toUpperCase();
const describe = (img: ImageRef) => `${kind(img.mediaType)} image · ${sizeLabel(img.bytes)}`;

function Thumb({ sessionId, image, onOpen }: { sessionId: string; image: ImageRef; onOpen(src: string): void }) {
  const trpc = useTRPC();
  const read = useQuery(
    trpc.attachments.read.queryOptions({ sessionId, id: image.id }, { staleTime: Infinity, retry: 1 }),
  );
  const src = read.data ? dataUrl(read.data) : undefined;
  return (
    <button
      className={styles.msgImage}
      title={read.error ? `${describe(image)}: ${read.error.message}` : describe(image)}
      disabled={!src}
      onClick={() => src && onOpen(src)}
      data-testid="msg-image"
      data-state={src ? "loaded" : read.error ? "error" : "loading"}
    >
      {src ? <img src={src} alt={describe(image)} /> : <span aria-hidden="true">{read.error ? "!" : "…"}</span>}
    </button>
  );
}

export function ImageLightbox({ src, caption, onClose }: { src: string; caption: string; onClose(): void }) {
  const [pixels, setPixels] = useState<string>();
  useEffect(() => {
    // Capturing, and stopped: Esc here closes the picture, it does not stop the agent's turn.
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== "Escape") return;
      e.preventDefault();
      e.stopPropagation();
      onClose();
    };
    window.addEventListener("keydown", onKey, true);
    return () => window.removeEventListener("keydown", onKey, true);
  }, [onClose]);
  return (
    <div
      className={styles.modal}
      onClick={onClose}
      role="dialog"
      aria-modal="true"
      aria-label={caption}
      data-testid="image-lightbox"
    >
      <figure className={styles.lightbox}>
        <img
          src={src}
          alt={caption}
          onLoad={(e) => setPixels(`${e.currentTarget.naturalWidth} × ${e.currentTarget.naturalHeight}`)}
        />
        <figcaption>
          {pixels ? `${pixels} · ` : ""}
          {caption} · Esc or a click closes
        </figcaption>
      </figure>
    </div>
  );
}

export function MessageImages({ sessionId, images }: { sessionId: string; images: readonly ImageRef[] }) {
  const [open, setOpen] = useState<{ src: string; caption: string }>();
  return (
    <div className={styles.msgImages} data-testid="msg-images">
      {images.map((img) => (
        <Thumb
          key={img.id}
          sessionId={sessionId}
          image={img}
          onOpen={(src) => setOpen({ src, caption: describe(img) })}
        />
      ))}
      {open && <ImageLightbox src={open.src} caption={open.caption} onClose={() => setOpen(undefined)} />}
    </div>
  );
}
