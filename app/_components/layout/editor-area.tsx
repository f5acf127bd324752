"use client";
// The editor area: the open files in Monaco, or over them one uncommitted change's diff or the
// agent's changes (one turn's or the session's), as the workspace says (use-workspace.ts).
import { EditorPane } from "../editor/editor-pane";
import { ChangeDiff } from "../changes/change-diff";
import { AgentChanges, reviewTurns } from "../agent-changes/agent-changes";
import type { SessionState } from "../../_lib/session-state";
import type { Workspace } from "./use-workspace";
import styles from "../ide-frame.module.css";

export function EditorArea({ sessionId, ws, state }: { sessionId: string; ws: Workspace; state: SessionState }) {
  const { diff, review, files } = ws;
  return (
    <section className={styles.editor} aria-label="Editor" data-testid="pane-editor">
      {/* Kept mounted under a change's diff: a new Monaco instance costs far more than showing this one again. */}
      <div className={styles.editorHost} hidden={!!diff || !!review}>
        <EditorPane sessionId={sessionId} files={files} workspace={ws.filePaths} reveal={ws.reveal} />
      </div>
      {review && !diff && (
        <AgentChanges
          sessionId={sessionId}
          turnId={review.turnId}
          turns={reviewTurns(state)}
          version={`${state.checkpoints.version}:${ws.filesVersion ?? 0}`}
          onScope={ws.openReview}
          onOpenFile={ws.openFile}
          onReverted={(p) => files.changed([p])}
          onClose={ws.closeReview}
        />
      )}
      {diff && (
        <ChangeDiff
          sessionId={sessionId}
          file={diff}
          version={ws.changesReadAt}
          onOpenFile={ws.openFile}
          onClose={() => ws.setDiff(null)}
        />
      )}
    </section>
  );
}
