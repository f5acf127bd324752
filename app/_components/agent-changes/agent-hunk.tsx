"use client";
// One hunk of the agent's changes under review: its lines with the file's own line numbers, its
// state (open, accepted, reverted), Accept (marks it reviewed) and Revert (undoes exactly these
// lines in the workspace; refused with the server's reason when the file changed there since).
import { useState } from "react";
import { DiffText } from "../chat/diff-text";
import type { AgentHunk } from "../../_lib/checkpoints-api";
import styles from "./agent-changes.module.css";

const STATE: Record<AgentHunk["state"], string> = { open: "to review", accepted: "accepted", reverted: "reverted" };

interface Props {
  hunk: AgentHunk;
  readOnly: boolean;
  onAccept(): Promise<unknown>;
  onRevert(): Promise<unknown>;
}

export function HunkView({ hunk, readOnly, onAccept, onRevert }: Props) {
  const [busy, setBusy] = useState<"accept" | "revert">();
  const [error, setError] = useState<string>();
  const act = (which: "accept" | "revert", run: () => Promise<unknown>) => {
    setBusy(which);
    setError(undefined);
    run().then(
      () => setBusy(undefined),
      (err: Error) => {
        setBusy(undefined);
        setError(err.message);
      },
    );
  };
  return (
    <div
      className={`${styles.hunk} ${styles[hunk.state]}`}
      data-testid="agent-hunk"
      data-state={hunk.state}
      data-hunk={hunk.id}
      aria-label={`Hunk ${hunk.header}, ${STATE[hunk.state]}`}
      role="group"
    >
      <div className={styles.hunkBar}>
        <span className={styles.badge} data-testid="hunk-state">
          {STATE[hunk.state]}
        </span>
        {!readOnly && (
          <>
            <button
              type="button"
              disabled={busy !== undefined || hunk.state !== "open"}
              title="Mark these lines reviewed: they stay as the agent wrote them"
              onClick={() => act("accept", onAccept)}
              data-testid="hunk-accept"
            >
              {busy === "accept" ? "Accepting…" : "Accept"}
            </button>
            <button
              type="button"
              disabled={busy !== undefined || hunk.state === "reverted"}
              title="Undo these lines in the workspace (the rest of the file stays)"
              onClick={() => act("revert", onRevert)}
              data-testid="hunk-revert"
            >
              {busy === "revert" ? "Reverting…" : "Revert"}
            </button>
          </>
        )}
      </div>
      {error && (
        <div className={styles.error} role="alert" data-testid="hunk-error">
          {error}
        </div>
      )}
      <DiffText text={[hunk.header, ...hunk.lines].join("\n")} />
    </div>
  );
}
