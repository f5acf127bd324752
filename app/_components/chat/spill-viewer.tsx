"use client";
// The full output of a truncated tool result, read from the database a page at a time so a
// many-megabyte spill never has to be loaded (or rendered) whole.
import { useCallback, useEffect, useRef, useState } from "react";
import { useSessionApi, type SpillPage } from "../../_lib/session-api";
import { useDialogFocus } from "../../_lib/use-dialog-focus";
import styles from "./chat.module.css";

const PAGE = 64 * 1024;

export function SpillViewer({
  sessionId,
  spillRef,
  title,
  onClose,
}: {
  sessionId: string;
  spillRef: string;
  title: string;
  onClose(): void;
}) {
  const api = useSessionApi();
  const [page, setPage] = useState<SpillPage>();
  const [error, setError] = useState<string>();
  const [loading, setLoading] = useState(false);
  const dialog = useRef<HTMLDivElement>(null);
  useDialogFocus(dialog);

  const load = useCallback(
    (offset: number) => {
      setLoading(true);
      api.spill(sessionId, spillRef, Math.max(0, offset), PAGE).then(
        (p) => {
          setPage(p);
          setError(undefined);
          setLoading(false);
        },
        (err: Error) => {
          setError(err.message);
          setLoading(false);
        },
      );
    },
    // api is rebuilt each render; the spill identity is what matters
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [sessionId, spillRef],
  );

  useEffect(() => load(0), [load]);
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => e.key === "Escape" && (e.stopPropagation(), onClose());
    window.addEventListener("keydown", onKey, true);
    return () => window.removeEventListener("keydown", onKey, true);
  }, [onClose]);

  const total = page?.totalBytes ?? 0;
  return (
    <div className={styles.modal} onClick={onClose}>
      <div
        ref={dialog}
        className={styles.viewer}
        role="dialog"
        aria-modal="true"
        aria-label="Full output"
        data-testid="spill-viewer"
        onClick={(e) => e.stopPropagation()}
      >
        <div className={styles.viewerBar}>
          <span>
            <strong>{title}</strong>{" "}
            {page && (
              <span className="muted" data-testid="spill-range">
                bytes {page.offset.toLocaleString()}–{page.end.toLocaleString()} of {total.toLocaleString()}
              </span>
            )}
          </span>
          <button disabled={!page || page.offset === 0 || loading} onClick={() => load(0)}>
            First
          </button>
          <button disabled={!page || page.offset === 0 || loading} onClick={() => load(page!.offset - PAGE)}>
            Previous
          </button>
          <button
            disabled={!page || page.end >= total || loading}
            onClick={() => load(page!.end)}
            data-testid="spill-next"
          >
            Next
          </button>
          <button
            disabled={!page || page.end >= total || loading}
            onClick={() => load(Math.floor((total - 1) / PAGE) * PAGE)}
          >
            Last
          </button>
          <button onClick={onClose}>Close</button>
        </div>
        {error ? (
          <div className={styles.error}>{error}</div>
        ) : (
          <pre data-testid="spill-text">{page?.text ?? "Loading…"}</pre>
        )}
      </div>
    </div>
  );
}
