"use client";
// The Changes side-bar tab: the workspace's uncommitted changes (against HEAD in a git work
// tree, else against the files as the runner first saw them), one row per file with its kind
// of change and line counts. A click shows the file's diff in the editor area (change-diff.tsx).
// It refreshes whenever the session reports changed files, as the tree does. In a git work tree
// it names the branch and, for a member, offers fetch, pull and push (git-sync.tsx) and a commit
// of everything (commit-box.tsx). "By the agent" opens the review of what the agent changed
// (agent-changes/), against its checkpoints rather than HEAD.
import { useEffect } from "react";
import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "../../_lib/trpc";
import { useReadOnly } from "../../_lib/read-only";
import { VisibleText } from "../../_lib/visible-text";
import { CommitBox } from "./commit-box";
import { GitSync } from "./git-sync";
import type { PersonChanges } from "../../../server/protocol/person-file-ops";
import styles from "./changes.module.css";

export type ChangedFile = PersonChanges["files"][number];

const LETTER: Record<ChangedFile["status"], string> = { added: "A", modified: "M", deleted: "D" };

interface Props {
  sessionId: string;
  /** Bumps when the session reports changed files. */
  version: number | undefined;
  enabled: boolean;
  selected: string | null;
  onOpen(file: ChangedFile): void;
  /** Opens "Changes by the agent" for the whole session. */
  onAgentChanges?(): void;
}

export function ChangesPanel({ sessionId, version, enabled, selected, onOpen, onAgentChanges }: Props) {
  const trpc = useTRPC();
  const readOnly = useReadOnly();
  const changes = useQuery(trpc.files.changes.queryOptions({ sessionId }, { enabled, retry: 1 }));
  const { refetch } = changes;
  useEffect(() => {
    if (version !== undefined && enabled) void refetch();
  }, [version, enabled, refetch]);
  const files = changes.data?.files;
  const against = changes.data
    ? changes.data.mode === "git"
      ? `${changes.data.branch ? `${changes.data.branch} · ` : ""}against HEAD`
      : "Against the files as first seen"
    : "Changes";

  return (
    <div className={styles.pane} data-testid="changes-panel">
      <div className={styles.head}>
        <span className={styles.against} title={against} data-testid="changes-against">
          {against}
        </span>
        <span className={styles.tools}>
          {onAgentChanges && (
            <button
              type="button"
              onClick={onAgentChanges}
              title="Review what the agent changed, per turn or for the session, hunk by hunk"
              data-testid="agent-changes-open"
            >
              By the agent
            </button>
          )}
          <button type="button" onClick={() => void refetch()} title="Refresh" aria-label="Refresh changes">
            ⟳
          </button>
        </span>
      </div>
      {changes.data && changes.data.mode !== "git" && (
        <div className={styles.scope} data-testid="changes-scope">
          Not a git work tree: only files edited through Quiver (the editor, the agent&apos;s file tools) are listed,
          not what commands changed.{onAgentChanges && " By the agent shows those too."}
        </div>
      )}
      {changes.data?.mode === "git" && !readOnly && (
        <GitSync sessionId={sessionId} stamp={changes.dataUpdatedAt} onSynced={() => void refetch()} />
      )}
      {changes.data?.mode === "git" && !readOnly && files && (
        <CommitBox sessionId={sessionId} count={files.length} onCommitted={() => void refetch()} />
      )}
      {changes.error && <div className={styles.error}>{changes.error.message}</div>}
      {changes.isPending && enabled && (
        <div className="muted" style={{ padding: 8 }}>
          Reading changes…
        </div>
      )}
      {files?.length === 0 && (
        <div className="muted" style={{ padding: 8 }}>
          No uncommitted changes.
        </div>
      )}
      <ul className={styles.list} role="listbox" aria-label="Changed files">
        {files?.map((f) => {
          const slash = f.path.lastIndexOf("/");
          return (
            <li
              key={f.path}
              role="option"
              aria-selected={selected === f.path}
              className={`${styles.row} ${selected === f.path ? styles.selected : ""}`}
              onClick={() => onOpen(f)}
              title={`${f.path} (${f.status})`}
              data-testid="change-item"
              data-path={f.path}
              data-status={f.status}
            >
              <span className={f.status === "deleted" ? styles.deletedName : styles.name}>
                <VisibleText text={f.path.slice(slash + 1)} name />
              </span>
              <span className={styles.dir}>
                <VisibleText text={slash > 0 ? f.path.slice(0, slash) : ""} name />
              </span>
              {f.binary ? (
                <span className={styles.dir}>binary</span>
              ) : (
                <span className={styles.counts}>
                  <span className={styles.plus}>+{f.added}</span> <span className={styles.minus}>−{f.removed}</span>
                </span>
              )}
              <span className={`${styles.letter} ${styles[f.status]}`}>{LETTER[f.status]}</span>
            </li>
          );
        })}
      </ul>
      {changes.data?.truncated && (
        <div className="muted" style={{ padding: 8 }}>
          The diff is too large to read whole: some files may be missing.
        </div>
      )}
    </div>
  );
}
