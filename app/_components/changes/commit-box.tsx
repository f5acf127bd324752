"use client";
// The Changes panel's commit box (git work trees): a message, then Commit (or Ctrl+Enter)
// commits every change inside the workspace folder, as VS Code's commit with nothing staged
// does. git's refusal (no identity, nothing to commit) shows under the box, the message kept.
import { useState } from "react";
import { useMutation } from "@tanstack/react-query";
import { useTRPC } from "../../_lib/trpc";
import styles from "./changes.module.css";

interface Props {
  sessionId: string;
  /** How many files the commit takes. */
  count: number;
  onCommitted(): void;
}

export function CommitBox({ sessionId, count, onCommitted }: Props) {
  const trpc = useTRPC();
  const [message, setMessage] = useState("");
  const [done, setDone] = useState<string>();
  const commit = useMutation(
    trpc.files.commit.mutationOptions({
      onSuccess: (r) => {
        setMessage("");
        setDone(`Committed ${r.commit}.`);
        onCommitted();
      },
    }),
  );
  const submit = () => {
    if (!message.trim() || commit.isPending) return;
    setDone(undefined);
    commit.mutate({ sessionId, message });
  };
  return (
    <div className={styles.commit}>
      <textarea
        value={message}
        onChange={(e) => setMessage(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
            e.preventDefault();
            submit();
          }
        }}
        placeholder="Message (Ctrl+Enter commits)"
        rows={2}
        aria-label="Commit message"
        data-testid="commit-message"
      />
      <button
        type="button"
        onClick={submit}
        disabled={!message.trim() || commit.isPending || count === 0}
        data-testid="commit-button"
      >
        {commit.isPending ? "Committing…" : count === 0 ? "Commit" : `Commit ${count} file${count === 1 ? "" : "s"}`}
      </button>
      {commit.error && (
        <div className={styles.error} data-testid="commit-error">
          {commit.error.message}
        </div>
      )}
      {done && !commit.error && (
        <div className="muted" data-testid="commit-done">
          {done}
        </div>
      )}
    </div>
  );
}
