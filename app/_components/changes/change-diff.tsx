"use client";
// One changed file side by side in the editor area: its earlier version (HEAD, or as the runner
// first saw it) against the file now, read-only, with Open to edit it and × to close the diff.
// A new file shows against nothing, a deleted one against nothing on the right. Discard (after
// asking) puts the earlier version back: a new file is deleted, a deleted one restored. Both
// sides are read again whenever the workspace's changes are (`version`): after a commit the
// earlier version is the committed one, and Discard reads it afresh at the moment it acts, so it
// never puts back a version older than HEAD (ide-frame closes the diff when no change is left).
import dynamic from "next/dynamic";
import { useEffect, useState } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useReadOnly } from "../../_lib/read-only";
import { useTRPC } from "../../_lib/trpc";
import type { ChangedFile } from "./changes-panel";
import styles from "./changes.module.css";
import { markedName } from "../../_lib/visible-text";

const MonacoDiff = dynamic(() => import("../editor/diff-editor"), {
  ssr: false,
  loading: () => <div className={styles.notice}>Loading diff…</div>,
});

const BEFORE: Record<ChangedFile["status"], string> = { added: "new file", modified: "changed", deleted: "deleted" };

interface Props {
  sessionId: string;
  file: ChangedFile;
  /** When the workspace's change list was last read. */
  version: number;
  onOpenFile(path: string): void;
  onClose(): void;
}

export function ChangeDiff({ sessionId, file, version, onOpenFile, onClose }: Props) {
  const trpc = useTRPC();
  const input = { sessionId, path: file.path };
  const original = useQuery(
    trpc.files.original.queryOptions(input, { enabled: file.status !== "added", retry: false, staleTime: 0 }),
  );
  const now = useQuery(
    trpc.files.read.queryOptions(input, {
      enabled: file.status !== "deleted" && !file.binary,
      retry: false,
      staleTime: 0,
    }),
  );
  const readOnly = useReadOnly();
  const queryClient = useQueryClient();
  const refetchOriginal = original.refetch;
  const refetchNow = now.refetch;
  const originalOn = file.status !== "added";
  const nowOn = file.status !== "deleted" && !file.binary;
  useEffect(() => {
    if (originalOn) void refetchOriginal();
    if (nowOn) void refetchNow();
  }, [version, originalOn, nowOn, refetchOriginal, refetchNow]);
  const [discardError, setDiscardError] = useState<string>();
  const onSettled = () => {
    void queryClient.invalidateQueries({ queryKey: trpc.files.changes.queryKey({ sessionId }) });
    void queryClient.invalidateQueries({ queryKey: trpc.files.tree.queryKey({ sessionId }) });
  };
  const save = useMutation(trpc.files.save.mutationOptions({ onSettled }));
  const remove = useMutation(trpc.files.remove.mutationOptions({ onSettled }));
  // Text only: a binary earlier version cannot travel through the editor's save.
  const canDiscard = !readOnly && !file.binary && (file.status === "added" || original.data?.content != null);
  const discard = async () => {
    const what =
      file.status === "added"
        ? `Delete ${markedName(file.path)}, which is new`
        : `Put back the earlier version of ${markedName(file.path)}`;
    if (!confirm(`${what}? Its current content is lost.`)) return;
    setDiscardError(undefined);
    try {
      // What is changed now, against the earlier version now: not what this view last showed.
      const changes = await queryClient.fetchQuery({ ...trpc.files.changes.queryOptions({ sessionId }), staleTime: 0 });
      const current = changes.files.find((f) => f.path === file.path);
      if (!current) return onClose();
      if (current.status === "added") await remove.mutateAsync(input);
      else {
        const earlier = await queryClient.fetchQuery({ ...trpc.files.original.queryOptions(input), staleTime: 0 });
        if (earlier.content == null)
          throw new Error(`The earlier version of ${file.path} is not text; it cannot be put back here.`);
        await save.mutateAsync({ ...input, content: earlier.content });
      }
      onClose();
    } catch (err) {
      setDiscardError((err as Error).message);
    }
  };
  const error = discardError ?? original.error?.message ?? now.error?.message;
  const ready = (file.status === "added" || original.data) && (file.status === "deleted" || file.binary || now.data);

  return (
    <div className={styles.diff} data-testid="change-diff" data-path={file.path}>
      <div className={styles.diffBar}>
        <strong>{file.path}</strong>
        <span>{BEFORE[file.status]} · before ↔ now</span>
        {file.status !== "deleted" && !file.binary && (
          <button type="button" onClick={() => onOpenFile(file.path)} data-testid="change-open">
            Open file
          </button>
        )}
        {canDiscard && (
          <button
            type="button"
            onClick={() => void discard()}
            disabled={save.isPending || remove.isPending}
            title="Put the earlier version back"
            data-testid="change-discard"
          >
            Discard
          </button>
        )}
        <button type="button" onClick={onClose} aria-label="Close the diff" data-testid="change-close">
          ×
        </button>
      </div>
      <div className={styles.diffBody}>
        {error ? (
          <div className={styles.notice}>{error}</div>
        ) : file.binary || original.data?.binary ? (
          <div className={styles.notice}>A binary file: no text to compare.</div>
        ) : !ready ? (
          <div className={styles.notice}>Loading diff…</div>
        ) : (
          <MonacoDiff
            key={file.path}
            path={file.path}
            original={original.data?.content ?? ""}
            modified={now.data?.content ?? ""}
            height="100%"
          />
        )}
      </div>
    </div>
  );
}
