"use client";
// The session's title in the IDE's top bar. A member renames it in place: click (or Enter on it),
// type, Enter or leaving the field saves, Esc gives up. A refused rename keeps the field open
// with the reason.
import { useState } from "react";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useTRPC } from "../_lib/trpc";
import styles from "./ide-frame.module.css";

export function SessionTitle({
  sessionId,
  title,
  editable,
}: {
  sessionId: string;
  title: string | undefined;
  editable: boolean;
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [draft, setDraft] = useState<string | null>(null);
  const rename = useMutation(
    trpc.sessions.rename.mutationOptions({
      onSuccess: (s) => {
        queryClient.setQueryData(trpc.sessions.get.queryKey({ id: sessionId }), s);
        void queryClient.invalidateQueries({ queryKey: trpc.sessions.list.queryKey() });
        setDraft(null);
      },
    }),
  );
  if (!editable || title === undefined) return <span className={styles.title}>{title ?? "…"}</span>;
  if (draft === null) {
    return (
      <span className={styles.title}>
        <button
          type="button"
          className={styles.titleButton}
          title="Rename this session"
          onClick={() => (rename.reset(), setDraft(title))}
          data-testid="session-title"
        >
          {title}
        </button>
      </span>
    );
  }
  const save = () => {
    const next = draft.trim();
    if (!next || next === title) return setDraft(null);
    if (!rename.isPending) rename.mutate({ id: sessionId, title: next });
  };
  return (
    <span className={styles.title}>
      <input
        autoFocus
        className={styles.titleInput}
        value={draft}
        maxLength={200}
        aria-label="Session title"
        aria-invalid={rename.isError}
        title={rename.error?.message}
        onChange={(e) => setDraft(e.target.value)}
        onFocus={(e) => e.target.select()}
        onBlur={save}
        onKeyDown={(e) => {
          if (e.key === "Enter") save();
          else if (e.key === "Escape") {
            e.preventDefault();
            setDraft(null);
          }
        }}
        data-testid="session-title-input"
      />
      {rename.error && <span className={styles.titleError}>{rename.error.message}</span>}
    </span>
  );
}
