"use client";
// Images in the message box until the message is sent: pasted (Ctrl+V of a screenshot),
// dropped on the chat pane or picked with the attach button, shown as thumbnails with ✕.
// A file that cannot go is refused in a line of the composer; nothing typed is lost.
import { useRef, useState, type ClipboardEvent, type DragEvent } from "react";
import { ACCEPT, dataUrl, readImages, type DraftImage } from "./attachments";
import { sizeLabel } from "../../_lib/bytes";
import styles from "./chat.module.css";

export function useDraftImages() {
  const [images, setImagesState] = useState<DraftImage[]>([]);
  const [error, setError] = useState<string>();
  const [dropping, setDropping] = useState(false);
  // Files still being read: Send waits for them rather than going without.
  const [reading, setReading] = useState(0);
  // Reads run one after another against the latest list, so two quick pastes cannot together
  // pass the per-message count.
  const latest = useRef<DraftImage[]>([]);
  const reads = useRef(Promise.resolve());
  const setImages = (next: DraftImage[]) => {
    latest.current = next;
    setImagesState(next);
  };

  const add = (files: readonly File[]) => {
    if (files.length === 0) return;
    setReading((n) => n + 1);
    reads.current = reads.current
      .then(async () => {
        const read = await readImages(files, latest.current.length);
        setImages([...latest.current, ...read.images]);
        setError(read.error);
      })
      .catch((err: Error) => setError(`Not attached: ${err.message}`))
      .finally(() => setReading((n) => n - 1));
  };
  const carriesFiles = (e: DragEvent) => [...e.dataTransfer.types].includes("Files");

  return {
    images,
    error,
    dropping,
    reading: reading > 0,
    add,
    remove: (key: string) => {
      setImages(latest.current.filter((i) => i.key !== key));
      setError(undefined);
    },
    /** After the message went (or was queued with them). */
    clear: () => {
      setImages([]);
      setError(undefined);
    },
    /** The message box's paste: images are attached, text pasted as usual. */
    onPaste: (e: ClipboardEvent) => {
      const files = [...e.clipboardData.files];
      // Cells copied from a spreadsheet come as text and a picture of it: that is text. A
      // screenshot, or an image copied in a browser, carries no plain text.
      if (files.length === 0 || e.clipboardData.types.includes("text/plain")) return;
      e.preventDefault();
      add(files);
    },
    /** For the chat pane: files dropped anywhere on it are attached. */
    drop: {
      onDragOver: (e: DragEvent) => {
        if (!carriesFiles(e)) return;
        e.preventDefault();
        e.dataTransfer.dropEffect = "copy";
        setDropping(true);
      },
      onDragLeave: (e: DragEvent) => {
        if (!e.currentTarget.contains(e.relatedTarget as Node | null)) setDropping(false);
      },
      onDrop: (e: DragEvent) => {
        if (!carriesFiles(e)) return;
        e.preventDefault();
        setDropping(false);
        add([...e.dataTransfer.files]);
      },
    },
  };
}

/** Thumbnails of images not sent yet (the message box's, a queued message's). */
export function DraftThumbs({ images, onRemove }: { images: readonly DraftImage[]; onRemove?(key: string): void }) {
  if (images.length === 0) return null;
  return (
    <div className={styles.drafts} data-testid="draft-images">
      {images.map((img) => (
        <span
          key={img.key}
          className={styles.draft}
          title={`${img.name} · ${sizeLabel(img.bytes)}`}
          data-testid="draft-image"
        >
          <img src={dataUrl(img)} alt={img.name} />
          {onRemove && (
            <button
              onClick={() => onRemove(img.key)}
              title={`Remove ${img.name}`}
              aria-label={`Remove ${img.name}`}
              data-testid="draft-image-remove"
            >
              ✕
            </button>
          )}
        </span>
      ))}
    </div>
  );
}

/** The paperclip beside Send: the browser's file chooser, images only. */
export function AttachButton({ onFiles }: { onFiles(files: File[]): void }) {
  const input = useRef<HTMLInputElement>(null);
  return (
    <>
      <input
        ref={input}
        type="file"
        accept={ACCEPT}
        multiple
        hidden
        onChange={(e) => {
          onFiles([...(e.target.files ?? [])]);
          // The same file picked again (after ✕) must fire change again.
          e.target.value = "";
        }}
        data-testid="attach-input"
      />
      <button
        className={styles.attach}
        onClick={() => input.current?.click()}
        title="Attach images (PNG, JPEG, GIF, WebP); or paste or drop them"
        aria-label="Attach images"
        data-testid="attach"
      >
        <svg viewBox="0 0 16 16" width="16" height="16" aria-hidden="true">
          <path
            d="M10.5 4.5 5.6 9.4a1.4 1.4 0 0 0 2 2l5.3-5.3a2.8 2.8 0 0 0-4-4L3.6 7.4a4.2 4.2 0 0 0 6 6l4-4"
            fill="none"
            stroke="currentColor"
            strokeWidth="1.3"
            strokeLinecap="round"
          />
        </svg>
      </button>
    </>
  );
}
