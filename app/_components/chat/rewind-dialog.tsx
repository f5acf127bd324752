"use client";
// The preview of a rewind, before anything changes: which files would be restored, deleted or
// put back (with line counts, from a dry run), which files the person edited by hand since and
// what happens to them, and for a conversation rewind how many turns the agent forgets. Confirm
// does it and hands the result to the chat (its Undo bar, the message box). Nothing is changed
// until Confirm; the server's refusal (a turn running, a conflict) is shown here as it says it.
import { useCallback, useEffect, useRef, useState } from "react";
import { useCheckpointsApi, type RestoreResult, type RewindResult } from "../../_lib/checkpoints-api";
import type { RewindKind } from "./turn-menu";
import styles from "./rewind.module.css";
import { useDialogFocus } from "../../_lib/use-dialog-focus";

const TITLE: Record<RewindKind, string> = {
  files: "Restore files to before this turn",
  conversation: "Rewind the conversation to here",
  both: "Rewind files and conversation",
};
const CHANGE: Record<RestoreResult["changes"][number]["change"], string> = {
  restore: "restored",
  delete: "deleted (the agent created it)",
  recreate: "put back (the agent deleted it)",
};

export interface RewindDone {
  kind: RewindKind;
  result: RewindResult;
}

interface Props {
  sessionId: string;
  turnId: string;
  kind: RewindKind;
  onClose(): void;
  onDone(done: RewindDone): void;
}

export function RewindDialog({ sessionId, turnId, kind, onClose, onDone }: Props) {
  const api = useCheckpointsApi();
  const files = kind !== "conversation";
  const [keep, setKeep] = useState(true);
  const [preview, setPreview] = useState<RewindResult>();
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const dialog = useRef<HTMLDivElement>(null);
  useDialogFocus(dialog);

  const call = useCallback(
    (dryRun: boolean): Promise<RewindResult> =>
      kind === "files"
        ? api.restoreTurn(sessionId, turnId, dryRun, keep).then((r) => ({ turnIds: [], files: r, text: "" }))
        : api.rewind({ sessionId, turnId, conversation: true, files, dryRun, keepUserEdits: keep }),
    [api, sessionId, turnId, kind, files, keep],
  );

  useEffect(() => {
    let live = true;
    setPreview(undefined);
    setError(undefined);
    call(true).then(
      (r) => live && setPreview(r),
      (err: Error) => live && setError(err.message),
    );
    return () => void (live = false);
  }, [call]);

  useEffect(() => {
    dialog.current?.querySelector<HTMLElement>("[data-autofocus]")?.focus();
  }, [preview]);

  const confirm = () => {
    setBusy(true);
    setError(undefined);
    call(false).then(
      (result) => onDone({ kind, result }),
      (err: Error) => {
        setBusy(false);
        setError(err.message);
      },
    );
  };

  const changes = preview?.files?.changes ?? [];
  const kept = preview?.files?.kept ?? [];
  return (
    <div className={styles.modal} onMouseDown={(e) => e.target === e.currentTarget && onClose()}>
      <div
        ref={dialog}
        className={styles.dialog}
        role="dialog"
        aria-modal="true"
        aria-label={TITLE[kind]}
        onKeyDown={(e) => {
          if (e.key === "Escape") {
            e.stopPropagation();
            onClose();
          }
        }}
        data-testid="rewind-preview"
      >
        <div className={styles.head}>
          <h2>{TITLE[kind]}</h2>
          <button type="button" onClick={onClose} aria-label="Close">
            ×
          </button>
        </div>
        {kind !== "files" && preview && (
          <p>
            The agent forgets this message and what came after it ({preview.turnIds.length}{" "}
            {preview.turnIds.length === 1 ? "turn" : "turns"}): they stay in the chat, marked as rewound, and are left
            out of what the model reads. Your message goes back in the message box.
          </p>
        )}
        {files && (
          <>
            <label className={styles.keep}>
              <input
                type="checkbox"
                checked={keep}
                onChange={(e) => setKeep(e.target.checked)}
                data-testid="rewind-keep-user-edits"
              />
              Keep my own edits made after this turn
            </label>
            <p className={styles.hint}>
              {keep
                ? "Files you changed by hand since the agent's turn stay as you left them; only the agent's changes are put back."
                : "Files you changed by hand since are put back too: your edits to them are lost (Undo brings them back)."}
            </p>
            {preview && changes.length === 0 && <p className="muted">No file would change.</p>}
            {changes.length > 0 && (
              <ul className={styles.changes} aria-label="Files that change">
                {changes.map((c) => (
                  <li key={c.path} data-testid="rewind-change" data-path={c.path} data-change={c.change}>
                    <span className={styles.path}>{c.path}</span>
                    <span className={styles.what}>{CHANGE[c.change]}</span>
                    <span className={styles.counts}>
                      <span className={styles.plus}>+{c.added}</span> <span className={styles.minus}>−{c.removed}</span>
                    </span>
                  </li>
                ))}
              </ul>
            )}
            {kept.length > 0 && (
              <div className={styles.kept} data-testid="rewind-kept">
                Kept as you edited them: {kept.join(", ")}
              </div>
            )}
          </>
        )}
        {!preview && !error && <p className="muted">Working out what would change…</p>}
        {error && (
          <div className={styles.error} role="alert" data-testid="rewind-error">
            {error}
          </div>
        )}
        <div className={styles.buttons}>
          <button type="button" onClick={onClose} data-testid="rewind-cancel">
            Cancel
          </button>
          <button
            type="button"
            className={styles.confirm}
            disabled={!preview || busy}
            onClick={confirm}
            data-autofocus
            data-testid="rewind-confirm"
          >
            {busy ? "Working…" : "Confirm"}
          </button>
        </div>
      </div>
    </div>
  );
}
