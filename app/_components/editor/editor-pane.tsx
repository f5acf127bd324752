"use client";
// The centre pane: tabs of open files (a middle click closes one), the Monaco editor, and, when
// the agent changed a file under unsaved edits, a banner offering the diff, the disk version, or
// keeping one's own. An image file shows as a picture (image-preview.tsx), for members.
import dynamic from "next/dynamic";
import { useCallback, useEffect, useState } from "react";
import type { EditorBuffers, useOpenFiles } from "../../_lib/use-open-files";
import type { Reveal } from "./code-editor";
import { whenIdle } from "../../_lib/idle";
import { useReadOnly } from "../../_lib/read-only";
import { ImagePreview, imageType } from "./image-preview";
import { useFileDiagnostics } from "./use-diagnostics";
import { EditorMru } from "./editor-mru";
import styles from "./editor.module.css";
import { markedName, VisibleText } from "../../_lib/visible-text";

const CodeEditor = dynamic(() => import("./code-editor"), {
  ssr: false,
  loading: () => <div className={styles.loading}>Loading editor…</div>,
});
const MonacoDiff = dynamic(() => import("./diff-editor"), { ssr: false });

type Files = ReturnType<typeof useOpenFiles>;

/**
 * `workspace` lists the workspace's files once known: the pane then mounts Monaco while the page
 * is idle (hidden until a file opens) and loads the languages those files use.
 */
export function EditorPane({
  sessionId,
  files,
  workspace,
  reveal,
}: {
  sessionId: string;
  files: Files;
  workspace?: readonly string[];
  reveal?: Reveal | null;
}) {
  const readOnly = useReadOnly();
  const [showDiff, setShowDiff] = useState(false);
  const [idle, setIdle] = useState(false);
  const known = workspace !== undefined;
  useEffect(() => (known ? whenIdle(() => setIdle(true)) : undefined), [known]);
  const { buffers } = files;
  const onReady = useCallback((b: EditorBuffers) => void (buffers.current = b), [buffers]);
  const active = files.tabs.active;
  const doc = active ? files.docs[active] : undefined;
  // The editor stays mounted on the last loaded file while the next one loads: creating a new
  // Monaco instance per open costs far more than the read.
  const [shown, setShown] = useState<string | null>(null);
  const unreadable = doc?.unreadable;
  const ready = !!doc && !doc.loading && !unreadable;
  useEffect(() => {
    if (ready && active) setShown(active);
  }, [ready, active]);
  const editorPath = ready ? active : shown && files.docs[shown] ? shown : null;
  const markers = useFileDiagnostics(sessionId, editorPath);

  return (
    <div className={styles.pane}>
      <EditorMru files={files} />
      <div className={styles.tabs} role="tablist" data-testid="editor-tabs">
        {files.tabs.open.map((p) => {
          const d = files.docs[p];
          return (
            <div
              key={p}
              role="tab"
              aria-selected={p === active}
              className={p === active ? styles.tabActive : styles.tab}
              onClick={() => files.setActive(p)}
              onMouseDown={(e) => e.button === 1 && e.preventDefault()}
              onAuxClick={(e) => e.button === 1 && files.close(p)}
              title={markedName(p)}
              data-testid="editor-tab"
              data-path={p}
              data-dirty={d?.dirty ? "true" : "false"}
            >
              <span>
                <VisibleText text={p.split("/").pop()!} name />
              </span>
              {d?.dirty && (
                <span className={styles.dot} aria-label="unsaved">
                  ●
                </span>
              )}
              <button
                className={styles.close}
                aria-label={`Close ${markedName(p)}`}
                onClick={(e) => (e.stopPropagation(), files.close(p))}
              >
                ×
              </button>
            </div>
          );
        })}
      </div>
      {doc?.conflict && (
        <div className={styles.conflict} data-testid="conflict-banner">
          <span>
            <VisibleText text={doc.path} name /> changed on disk (the agent edited it) while you have unsaved edits.
          </span>
          <button onClick={() => setShowDiff((v) => !v)} data-testid="conflict-diff">
            {showDiff ? "Hide diff" : "Show diff"}
          </button>
          <button onClick={() => (files.takeDisk(doc.path), setShowDiff(false))} data-testid="conflict-take-disk">
            Use disk version
          </button>
          <button
            onClick={() => (void files.save(doc.path, true), setShowDiff(false))}
            data-testid="conflict-keep-mine"
          >
            Keep mine (overwrite)
          </button>
        </div>
      )}
      {doc?.error && (
        <div className={styles.error} data-testid="editor-error">
          {doc.error}
        </div>
      )}
      <div className={styles.body}>
        {doc?.loading && <div className={styles.opening}>Opening {active}…</div>}
        {(editorPath || idle) && (
          // Stays mounted under the diff and the empty state: a new Monaco instance costs far
          // more than showing this one again.
          <div
            className={
              editorPath && !unreadable && !(doc?.conflict && showDiff)
                ? styles.host
                : `${styles.host} ${styles.hidden}`
            }
          >
            <CodeEditor
              key="editor"
              path={editorPath}
              initial={editorPath ? files.docs[editorPath].base : ""}
              warmPaths={workspace ?? []}
              onReady={onReady}
              onEdit={files.setDirty}
              onSave={(p) => void files.save(p)}
              reveal={reveal}
              markers={markers}
            />
          </div>
        )}
        {unreadable && active && imageType(active) && !readOnly ? (
          <ImagePreview sessionId={sessionId} path={active} mime={imageType(active)!} />
        ) : unreadable ? (
          <div className={styles.empty} data-testid="editor-unreadable">
            <div>{unreadable}</div>
          </div>
        ) : !editorPath ? (
          <div className={styles.empty}>
            {doc?.loading ? null : (
              <div>
                Open a file from the tree, or press <kbd>Ctrl</kbd>+<kbd>P</kbd>.
              </div>
            )}
          </div>
        ) : (
          doc?.conflict &&
          showDiff && (
            <div className={styles.diffWrap} data-testid="conflict-diff-view">
              <div className={styles.diffLabels}>
                <span>On disk</span>
                <span>Your edits</span>
              </div>
              <MonacoDiff
                path={doc.path}
                original={doc.conflict.text}
                modified={files.buffers.current?.getText(doc.path) ?? ""}
                height="100%"
              />
            </div>
          )
        )}
      </div>
    </div>
  );
}
