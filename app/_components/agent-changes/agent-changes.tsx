"use client";
// "Changes by the agent", in the editor area: every file the agent changed in one turn (its
// checkpoint before the turn against the one after) or in the whole session (the first
// checkpoint against the workspace now), as hunks to Accept or Revert (agent-hunk.tsx). It is
// read again whenever the session reports a checkpoint, a restore, a review or changed files, so
// a revert made here or in another tab shows at once; the file's open editor follows a revert
// through `onReverted` as it follows any change.
import { useEffect, useMemo } from "react";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { diffKey, useCheckpointsApi } from "../../_lib/checkpoints-api";
import { useReadOnly } from "../../_lib/read-only";
import { VisibleText } from "../../_lib/visible-text";
import type { SessionState } from "../../_lib/session-state";
import { HunkView } from "./agent-hunk";
import styles from "./agent-changes.module.css";

export interface ReviewTurn {
  turnId: string;
  label: string;
}

/** The turns that changed files, oldest first, named by their number and message. */
export function reviewTurns(state: Pick<SessionState, "items" | "checkpoints">): ReviewTurn[] {
  const out: ReviewTurn[] = [];
  let n = 0;
  for (const item of state.items) {
    if (item.kind !== "user") continue;
    n++;
    const files = item.turnId ? (state.checkpoints.changed[item.turnId] ?? 0) : 0;
    if (!item.turnId || files === 0) continue;
    const text = item.text.length > 40 ? `${item.text.slice(0, 40)}…` : item.text;
    out.push({ turnId: item.turnId, label: `Turn ${n}: ${text || "(images)"}` });
  }
  return out;
}

const STATUS = { added: "new", modified: "changed", deleted: "deleted" } as const;

interface Props {
  sessionId: string;
  /** One turn's changes; undefined: the whole session's. */
  turnId?: string;
  turns: ReviewTurn[];
  /** Bumps when the session reports something that may change the diff. */
  version: string;
  onScope(turnId: string | undefined): void;
  onOpenFile(path: string): void;
  onReverted(path: string): void;
  onClose(): void;
}

export function AgentChanges({ sessionId, turnId, turns, version, onScope, onOpenFile, onReverted, onClose }: Props) {
  const api = useCheckpointsApi();
  const readOnly = useReadOnly();
  const queryClient = useQueryClient();
  const key = useMemo(() => diffKey(sessionId, turnId), [sessionId, turnId]);
  const diff = useQuery({ queryKey: key, queryFn: () => api.diff(sessionId, turnId), staleTime: 0, retry: 1 });
  const { refetch } = diff;
  useEffect(() => void refetch(), [version, refetch]);
  const reread = () => queryClient.invalidateQueries({ queryKey: key });

  const files = diff.data?.files;
  const hunks = files?.reduce((n, f) => n + f.hunks.length, 0) ?? 0;
  const open = files?.reduce((n, f) => n + f.hunks.filter((h) => h.state === "open").length, 0) ?? 0;
  return (
    <div className={styles.view} data-testid="agent-changes" data-turn={turnId ?? ""}>
      <div className={styles.bar}>
        <strong>Changes by the agent</strong>
        <select
          value={turnId ?? ""}
          onChange={(e) => onScope(e.target.value || undefined)}
          aria-label="Which changes"
          data-testid="agent-changes-scope"
        >
          <option value="">Whole session</option>
          {turnId && !turns.some((t) => t.turnId === turnId) && <option value={turnId}>This turn</option>}
          {turns.map((t) => (
            <option key={t.turnId} value={t.turnId}>
              {t.label}
            </option>
          ))}
        </select>
        <span className={styles.summary}>
          {files
            ? `${files.length} ${files.length === 1 ? "file" : "files"} · ${hunks} ${hunks === 1 ? "hunk" : "hunks"}, ${open} to review`
            : ""}
        </span>
        <button type="button" onClick={() => void refetch()} title="Read the changes again" aria-label="Refresh">
          ⟳
        </button>
        <button type="button" onClick={onClose} aria-label="Close the review" data-testid="agent-changes-close">
          ×
        </button>
      </div>
      <div className={styles.body}>
        {diff.error && (
          <div className={styles.error} role="alert">
            {diff.error.message}
          </div>
        )}
        {diff.isPending && <div className={styles.empty}>Reading the agent&apos;s changes…</div>}
        {files?.length === 0 && (
          <div className={styles.empty}>The agent changed no files {turnId ? "in this turn" : "in this session"}.</div>
        )}
        {files?.map((f) => (
          <section
            key={f.path}
            className={styles.file}
            data-testid="agent-change-file"
            data-path={f.path}
            data-status={f.status}
            aria-label={f.path}
          >
            <div className={styles.fileHead}>
              <span className={styles.path} title={f.path}>
                <VisibleText text={f.path} name />
              </span>
              <span className={`${styles.status} ${styles[f.status]}`}>{STATUS[f.status]}</span>
              {f.status !== "deleted" && (
                <button type="button" onClick={() => onOpenFile(f.path)} data-testid="agent-change-open">
                  Open file
                </button>
              )}
            </div>
            {f.binary ? (
              <div className={styles.note}>A binary file: no lines to review.</div>
            ) : f.hunks.length === 0 ? (
              <div className={styles.note}>No line changes (its mode or type changed).</div>
            ) : (
              <div className={styles.hunks}>
                {f.hunks.map((h) => (
                  <HunkView
                    key={h.id}
                    hunk={h}
                    readOnly={readOnly}
                    onAccept={() => api.acceptHunk(sessionId, turnId, f.path, h.id).finally(reread)}
                    onRevert={() =>
                      api
                        .revertHunk(sessionId, turnId, f.path, h.id)
                        .then((r) => onReverted(r.path ?? f.path))
                        .finally(reread)
                    }
                  />
                ))}
              </div>
            )}
          </section>
        ))}
      </div>
    </div>
  );
}
