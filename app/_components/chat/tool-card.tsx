"use client";
// One tool call: name, one-line summary, status, duration, and (expanded) the diff of an edit,
// live output while running (with its elapsed time and output size), the result, and "View
// full output" for spilled results. The header's toggle is a real button (Tab reaches it, Enter
// and Space open and close it). A destructive command's card looks different in colour, mark
// and words. A failure written for the model shows the person's note, the model's text behind
// a toggle (model-note.tsx). An edit's
// diff is the file's real one (its lines numbered as in the file): what the runner applied
// (tool.finished), else what its approval card proposed; sessions recorded before either
// existed fall back to a diff of the input's snippets.
import dynamic from "next/dynamic";
import { memo, useState } from "react";
import type { ApprovalCard as ApprovalState, ToolCard as Card } from "../../_lib/session-state";
import type { ApprovalChoice } from "../../_lib/session-api";
import { ApprovalCard } from "./approval-card";
import { DiffText } from "./diff-text";
import { ModelNote } from "./model-note";
import { RunningMeta } from "./tool-card-live";
import styles from "./chat.module.css";
import own from "./tool-card.module.css";

const MonacoDiff = dynamic(() => import("../editor/diff-editor"), {
  ssr: false,
  loading: () => <div className="muted">Loading diff…</div>,
});

const LABEL: Record<Card["status"], string> = {
  queued: "queued",
  awaiting_approval: "awaiting approval",
  running: "running",
  succeeded: "done",
  failed: "failed",
  rejected: "rejected",
  cancelled: "cancelled",
  blocked: "blocked",
};

function duration(ms?: number): string {
  if (ms === undefined) return "";
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/** Sessions whose events carry no real diff: what the input alone says (snippets numbered from 1). */
function InputEditView({ name, input }: { name: string; input: unknown }) {
  const i = (input ?? {}) as Record<string, unknown>;
  const before = i.old_string ?? i.old_text;
  const after = i.new_string ?? i.new_text;
  if (name === "edit_file" && typeof before === "string" && typeof after === "string") {
    const lines = Math.max(before.split("\n").length, after.split("\n").length);
    return (
      <MonacoDiff
        path={String(i.path ?? "")}
        original={before}
        modified={after}
        height={Math.min(320, 60 + 19 * lines)}
      />
    );
  }
  if (name === "apply_patch" && typeof i.patch === "string") return <DiffText text={i.patch} />;
  if (name === "write_file" && typeof i.content === "string") {
    const lines = (i.content.endsWith("\n") ? i.content.slice(0, -1) : i.content).split("\n");
    return (
      <DiffText
        text={`+++ ${String(i.path ?? "")}\n@@ -0,0 +1,${lines.length} @@\n${lines.map((l) => `+${l}`).join("\n")}`}
      />
    );
  }
  return null;
}

const NOT_APPLIED = new Set<Card["status"]>(["rejected", "cancelled", "failed", "blocked"]);
/** The runner's last line of an applied diff it cut (runner/files/change-diff.ts). */
const APPLIED_CUT = /\n… diff cut: /;

function EditView({ card, approval }: { card: Card; approval?: ApprovalState }) {
  // While its approval card asks, that card shows the diff.
  if (approval?.request.diff && !approval.decision) return null;
  const diff = card.diff ?? approval?.request.diff;
  if (diff === undefined) return <InputEditView name={card.name} input={card.input} />;
  const notApplied = card.diff === undefined && NOT_APPLIED.has(card.status);
  return (
    <div data-testid="edit-diff" data-source={card.diff !== undefined ? "applied" : "proposed"}>
      {notApplied && <div className={styles.diffCaption}>Proposed change (not applied)</div>}
      <DiffText text={diff} />
      {card.diff !== undefined && APPLIED_CUT.test(card.diff) && (
        <div className={styles.diffCaption} data-testid="edit-diff-cut">
          Only the first part of this change is shown here; Review changes, under the turn, shows all of it.
        </div>
      )}
    </div>
  );
}

const EDITS = new Set(["edit_file", "apply_patch", "write_file"]);
// Results of plain reads are long and rarely needed: shown on click. Everything else stays open.
const QUIET = new Set(["read_file", "list_files", "search_text", "glob", "tool_search", "retrieve_tool_result"]);

interface Props {
  card: Card;
  approval?: ApprovalState;
  onAnswer(approvalId: string, choice: ApprovalChoice, message?: string): Promise<unknown>;
  onViewSpill(ref: string, title: string): void;
  /** Set when the call touched a workspace file the editor can open (tool-file.ts). */
  onOpenFile?(): void;
}

export const ToolCardView = memo(function ToolCardView({ card, approval, onAnswer, onViewSpill, onOpenFile }: Props) {
  const live = card.status === "running" || card.status === "awaiting_approval";
  const [open, setOpen] = useState<boolean | null>(null);
  const expanded = open ?? (live || card.isError || !QUIET.has(card.name));
  const destructive = approval?.request.destructive;
  const bodyId = `tool-body-${card.callId}`;
  return (
    <div
      className={`${styles.card} ${destructive ? own.destructiveCard : ""}`}
      data-testid="tool-card"
      data-tool={card.name}
      data-status={card.status}
      data-destructive={destructive ? "true" : undefined}
    >
      {/* The whole header toggles for a mouse; the keyboard's way in is the toggle button. */}
      <div className={styles.cardHead} onClick={(e) => e.target === e.currentTarget && setOpen(!expanded)}>
        <button
          type="button"
          className={own.toggle}
          onClick={() => setOpen(!expanded)}
          aria-expanded={expanded}
          aria-controls={bodyId}
          data-testid="tool-toggle"
        >
          <span className={own.chevron} aria-hidden="true">
            {expanded ? "▾" : "▸"}
          </span>
          <span className={styles.cardName}>{card.name}</span>
          <span className={styles.cardSummary} title={card.summary}>
            {card.summary}
          </span>
        </button>
        <span className={styles.cardMeta}>
          {destructive && (
            <span className={own.destructiveTag} title={destructive.reason} data-testid="tool-destructive-tag">
              <span aria-hidden="true">⚠ </span>destructive
            </span>
          )}
          {card.approvedBy && (
            <span className={styles.standing} title={card.approvedBy.reason} data-testid="approved-by">
              {card.approvedBy.kind === "session" ? "session approval" : "policy"}
            </span>
          )}
          {card.mode && (
            <span className={styles.modeTag} title="The session's mode this call was judged in" data-testid="tool-mode">
              {card.mode}
            </span>
          )}
          {card.status === "running" ? (
            <RunningMeta since={card.runningSince ?? card.startedAt} outputChars={card.outputChars} />
          ) : (
            <span className="muted">{duration(card.durationMs)}</span>
          )}
          {onOpenFile && (
            <button
              className={styles.cardOpen}
              onClick={(e) => (e.stopPropagation(), onOpenFile())}
              title="Open the file in the editor"
              data-testid="tool-open-file"
            >
              Open
            </button>
          )}
          <span className={`${styles.status} ${styles[`s_${card.status}`] ?? ""}`} data-testid="tool-status">
            {LABEL[card.status]}
          </span>
        </span>
      </div>
      {approval && (
        <div className={styles.cardBody}>
          <ApprovalCard
            card={approval}
            onAnswer={(choice, message) => onAnswer(approval.approvalId, choice, message)}
            onViewWhole={(ref) => onViewSpill(ref, `${card.name}: the whole change (${card.summary})`)}
          />
        </div>
      )}
      {expanded && (
        <div className={styles.cardBody} id={bodyId}>
          {EDITS.has(card.name) && <EditView card={card} approval={approval} />}
          {card.progress && card.output === undefined && (
            <pre className={styles.output} data-testid="tool-progress">
              {card.progress}
            </pre>
          )}
          {card.output !== undefined && !card.note && (
            <pre className={styles.output} data-testid="tool-output">
              {card.output || "(no output)"}
            </pre>
          )}
          <ModelNote note={card.note} modelText={card.modelText} />
          {card.truncated && card.spillRef && (
            <button
              onClick={() => onViewSpill(card.spillRef!, `${card.name}: ${card.summary}`)}
              data-testid="view-full-output"
            >
              View full output
            </button>
          )}
        </div>
      )}
    </div>
  );
});
