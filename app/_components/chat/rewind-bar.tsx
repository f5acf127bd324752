"use client";
// What a rewind leaves in the chat: the preview dialog while one is being chosen, and after it
// a bar saying what was done with Undo, which undoes exactly it: a files restore by restoring
// to the checkpoint taken just before it, a conversation rewind by turns.unrewind. The rewound
// turn's message goes back into the message box (through `onText`).
import { useCallback, useState, type ReactNode } from "react";
import { useCheckpointsApi } from "../../_lib/checkpoints-api";
import { RewindDialog, type RewindDone } from "./rewind-dialog";
import type { RewindKind } from "./turn-menu";
import styles from "./rewind.module.css";

function describe({ kind, result }: RewindDone): string {
  const failed = result.files?.failed ?? [];
  const n = (result.files?.changes.length ?? 0) - failed.length;
  // A restore that failed partway still offers Undo: the bar says what was not restored.
  const not = failed.length
    ? `; ${failed.length} not restored: ${failed
        .slice(0, 3)
        .map((f) => `${f.path} (${f.reason})`)
        .join(", ")}${failed.length > 3 ? "…" : ""}`
    : "";
  const files = result.files?.unknown?.replace(/\.$/, "") ?? `${n} ${n === 1 ? "file" : "files"} restored${not}`;
  const turns = `${result.turnIds.length} ${result.turnIds.length === 1 ? "turn" : "turns"} rewound`;
  return kind === "files" ? files : kind === "conversation" ? turns : `${turns}, ${files}`;
}

export function useRewind(
  sessionId: string,
  onText: (text: string) => void,
): { open(turnId: string, kind: RewindKind): void; ui: ReactNode } {
  const api = useCheckpointsApi();
  const [choosing, setChoosing] = useState<{ turnId: string; kind: RewindKind }>();
  const [done, setDone] = useState<RewindDone>();
  const [undo, setUndo] = useState<{ busy: boolean; error?: string }>({ busy: false });
  const open = useCallback((turnId: string, kind: RewindKind) => setChoosing({ turnId, kind }), []);

  const undoIt = async (d: RewindDone) => {
    setUndo({ busy: true });
    try {
      if (d.result.rewindId) await api.unrewind(sessionId, d.result.rewindId);
      const back = d.result.files?.undoCheckpointId;
      if (back) await api.restoreTo(sessionId, back);
      setDone(undefined);
      setUndo({ busy: false });
    } catch (err) {
      setUndo({ busy: false, error: (err as Error).message });
    }
  };

  const ui = (
    <>
      {done && (
        <div className={styles.bar} role="status" data-testid="rewind-bar">
          <span>{describe(done)}.</span>
          {undo.error && (
            <span className={styles.error} role="alert">
              {undo.error}
            </span>
          )}
          <button type="button" disabled={undo.busy} onClick={() => void undoIt(done)} data-testid="rewind-undo">
            {undo.busy ? "Undoing…" : "Undo"}
          </button>
          <button type="button" aria-label="Dismiss" onClick={() => setDone(undefined)}>
            ×
          </button>
        </div>
      )}
      {choosing && (
        <RewindDialog
          sessionId={sessionId}
          turnId={choosing.turnId}
          kind={choosing.kind}
          onClose={() => setChoosing(undefined)}
          onDone={(d) => {
            setChoosing(undefined);
            setUndo({ busy: false });
            setDone(d);
            if (d.kind !== "files" && d.result.text) onText(d.result.text);
          }}
        />
      )}
    </>
  );
  return { open, ui };
}
