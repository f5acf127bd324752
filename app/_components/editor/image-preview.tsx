"use client";
// An image file in the editor area, as VS Code shows one: the picture on a checkerboard (so
// transparency shows), its pixel size and bytes. Bytes come through files.raw (members only).
import { useState } from "react";
import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "../../_lib/trpc";
import { sizeLabel } from "../../_lib/bytes";
import styles from "./editor.module.css";

const MIME: Record<string, string> = {
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  avif: "image/avif",
  bmp: "image/bmp",
  ico: "image/x-icon",
};

/** The image type of `path` by its extension (SVG is text: it opens in the editor). */
export function imageType(path: string): string | undefined {
  return MIME[path.slice(path.lastIndexOf(".") + 1).toLowerCase()];
}

export function ImagePreview({ sessionId, path, mime }: { sessionId: string; path: string; mime: string }) {
  const trpc = useTRPC();
  const raw = useQuery(trpc.files.raw.queryOptions({ sessionId, path }, { retry: false, staleTime: 5_000 }));
  const [pixels, setPixels] = useState<string>();
  if (raw.error)
    return (
      <div className={styles.empty} data-testid="image-error">
        {raw.error.message}
      </div>
    );
  if (!raw.data) return <div className={styles.empty}>Loading {path}…</div>;
  return (
    <div className={styles.image} data-testid="image-preview">
      <img
        src={`data:${mime};base64,${raw.data.base64}`}
        alt={path}
        onLoad={(e) => setPixels(`${e.currentTarget.naturalWidth} × ${e.currentTarget.naturalHeight}`)}
        onError={() => setPixels("the browser cannot show this image")}
      />
      <div className={styles.imageInfo} data-testid="image-info">
        {pixels ? `${pixels} · ` : ""}
        {sizeLabel(raw.data.size)}
      </div>
    </div>
  );
}
