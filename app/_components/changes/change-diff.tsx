"use client";
// One changed file side by side in the editor area: its earlier version (HEAD, or as the runner
// first saw it) against the file now, read-only, with Open to edit it and × to close the diff.
// A new file shows against nothing, a deleted one against nothing on the right.
import dynamic from "next/dynamic";
import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "../../_lib/trpc";
import type { ChangedFile } from "./changes-panel";
import styles from "./changes.module.css";

const MonacoDiff = dynamic(() => import("../editor/diff-editor"), { ssr: false, loading: () => <div className={styles.notice}>Loading diff…</div> });

const BEFORE: Record<ChangedFile["status"], string> = { added: "new file", modified: "changed", deleted: "deleted" };

interface Props {
  sessionId: string;
  file: ChangedFile;
  onOpenFile(path: string): void;
  onClose(): void;
}

export function ChangeDiff({ sessionId, file, onOpenFile, onClose }: Props) {
  const trpc = useTRPC();
  const input = { sessionId, path: file.path };
  const original = useQuery(trpc.files.original.queryOptions(input, { enabled: file.status !== "added", retry: false, staleTime: 0 }));
  const now = useQuery(trpc.files.read.queryOptions(input, { enabled: file.status !== "deleted" && !file.binary, retry: false, staleTime: 0 }));
  const error = original.error?.message ?? now.error?.message;
  const ready = (file.status === "added" || original.data) && (file.status === "deleted" || file.binary || now.data);

  return (
    <div className={styles.diff} data-testid="change-diff" data-path={file.path}>
      <div className={styles.diffBar}>
        <strong>{file.path}</strong>
        <span>{BEFORE[file.status]} · before ↔ now</span>
        {file.status !== "deleted" && !file.binary && (
          <button type="button" onClick={() => onOpenFile(file.path)} data-testid="change-open">Open file</button>
        )}
        <button type="button" onClick={onClose} aria-label="Close the diff" data-testid="change-close">×</button>
      </div>
      <div className={styles.diffBody}>
        {error ? (
          <div className={styles.notice}>{error}</div>
        ) : file.binary || original.data?.binary ? (
          <div className={styles.notice}>A binary file: no text to compare.</div>
        ) : !ready ? (
          <div className={styles.notice}>Loading diff…</div>
        ) : (
          <MonacoDiff key={file.path} path={file.path} original={original.data?.content ?? ""} modified={now.data?.content ?? ""} height="100%" />
        )}
      </div>
    </div>
  );
}
