"use client";
// The top bar's sessions: a button that opens the switcher (the person's recent sessions of this
// project, latest first, searched by title, walked with the arrow keys) and New Session, both
// without going back to the home page. Ctrl+Alt+S opens the switcher, as does the command
// palette; the palette also makes a new session. Opening another session loads its page, so
// unsaved edits are asked about first (the editor's leave guard).
import { useEffect, useRef, useState } from "react";
import { useMutation, useQuery } from "@tanstack/react-query";
import { useTRPC } from "../../_lib/trpc";
import { useIdeCommand } from "../../_lib/ide-bus";
import { useReadOnly } from "../../_lib/read-only";
import { ago, matchSessions } from "../../_lib/session-search";
import quick from "../editor/editor.module.css";
import styles from "./sessions.module.css";

const go = (id: string) => window.location.assign(`/s/${id}`);

/** Ctrl+Alt+S (Cmd+Alt+S). */
export const isSwitcherKey = (e: Pick<KeyboardEvent, "ctrlKey" | "metaKey" | "altKey" | "shiftKey" | "code">) =>
  (e.ctrlKey || e.metaKey) && e.altKey && !e.shiftKey && e.code === "KeyS";

export function SessionSwitcher({ sessionId }: { sessionId: string }) {
  const trpc = useTRPC();
  const readOnly = useReadOnly();
  const [open, setOpen] = useState(false);
  const session = useQuery(trpc.sessions.get.queryOptions({ id: sessionId }, { retry: false }));
  const projectId = session.data?.projectId ?? undefined;
  const create = useMutation(trpc.sessions.create.mutationOptions({ onSuccess: (s) => go(s.id) }));
  const newSession = () => !create.isPending && create.mutate(projectId ? { projectId } : undefined);
  useIdeCommand("sessions.switch", () => setOpen(true));
  useIdeCommand("sessions.new", newSession);
  useEffect(() => {
    if (readOnly) return;
    const onKey = (e: KeyboardEvent) => {
      if (!isSwitcherKey(e)) return;
      e.preventDefault();
      e.stopPropagation();
      setOpen(true);
    };
    window.addEventListener("keydown", onKey, true);
    return () => window.removeEventListener("keydown", onKey, true);
  }, [readOnly]);
  if (readOnly) return null;

  return (
    <span className={styles.bar}>
      <button
        type="button"
        className={styles.button}
        onClick={() => setOpen(true)}
        title="Switch to another session of this project (Ctrl+Alt+S)"
        aria-haspopup="dialog"
        data-testid="session-switcher-button"
      >
        Sessions ▾
      </button>
      <button
        type="button"
        className={styles.button}
        onClick={newSession}
        disabled={create.isPending}
        title="Start a new session in this project"
        data-testid="session-new"
      >
        {create.isPending ? "Creating…" : "+ New"}
      </button>
      {create.error && (
        <span className={styles.error} role="alert">
          {create.error.message}
        </span>
      )}
      {open && (
        <SwitcherDialog sessionId={sessionId} projectId={projectId} onNew={newSession} onClose={() => setOpen(false)} />
      )}
    </span>
  );
}

function SwitcherDialog({
  sessionId,
  projectId,
  onNew,
  onClose,
}: {
  sessionId: string;
  projectId?: string;
  onNew(): void;
  onClose(): void;
}) {
  const trpc = useTRPC();
  const list = useQuery(trpc.sessions.list.queryOptions(projectId ? { projectId } : undefined, { staleTime: 5_000 }));
  const [query, setQuery] = useState("");
  const [sel, setSel] = useState(0);
  const input = useRef<HTMLInputElement>(null);
  const back = useRef<Element | null>(null);
  useEffect(() => {
    back.current = document.activeElement;
    input.current?.focus();
    return () => (back.current as HTMLElement | null)?.focus?.();
  }, []);
  const found = matchSessions(list.data ?? [], query);
  // The last row is New Session: Enter on it (or on no match) starts one.
  const rows = found.length + 1;
  const index = Math.min(sel, rows - 1);
  const choose = (i: number) => {
    const s = found[i];
    if (!s) return onNew();
    if (s.id === sessionId) return onClose();
    go(s.id);
  };

  const onKey = (e: React.KeyboardEvent) => {
    if (e.key === "ArrowDown") setSel((index + 1) % rows);
    else if (e.key === "ArrowUp") setSel((index - 1 + rows) % rows);
    else if (e.key === "Enter") choose(index);
    else if (e.key === "Escape") onClose();
    else return;
    e.preventDefault();
    e.stopPropagation();
  };

  return (
    <div className={quick.quick} onClick={onClose}>
      <div
        className={quick.quickBox}
        role="dialog"
        aria-modal="true"
        aria-label="Switch session"
        onClick={(e) => e.stopPropagation()}
        onKeyDown={onKey}
        data-testid="session-switcher"
      >
        <input
          ref={input}
          value={query}
          onChange={(e) => (setQuery(e.target.value), setSel(0))}
          placeholder="Search sessions by title"
          aria-label="Search sessions by title"
          aria-controls="session-switcher-list"
          aria-activedescendant={`session-row-${index}`}
          role="combobox"
          aria-expanded="true"
          data-testid="session-search"
        />
        <ul className={quick.quickList} role="listbox" id="session-switcher-list" aria-label="Sessions">
          {list.isPending && <li className="muted">Loading sessions…</li>}
          {list.error && (
            <li className="muted" role="alert">
              {list.error.message}
            </li>
          )}
          {found.map((s, i) => (
            <li
              key={s.id}
              id={`session-row-${i}`}
              role="option"
              aria-selected={i === index}
              aria-current={s.id === sessionId ? "page" : undefined}
              className={i === index ? quick.quickSel : undefined}
              onMouseMove={() => i !== index && setSel(i)}
              onClick={() => choose(i)}
              data-testid="session-row"
              data-id={s.id}
            >
              <span className={styles.title}>
                {s.title}
                {s.id === sessionId ? " (this one)" : ""}
              </span>
              <span className={quick.quickKeys}>
                {s.status === "running" ? "running · " : ""}
                {ago(s.updatedAt)}
              </span>
            </li>
          ))}
          {list.data && found.length === 0 && (
            <li className="muted">No session of this project has “{query}” in its title.</li>
          )}
          <li
            id={`session-row-${found.length}`}
            role="option"
            aria-selected={index === found.length}
            className={index === found.length ? quick.quickSel : undefined}
            onMouseMove={() => setSel(found.length)}
            onClick={() => choose(found.length)}
            data-testid="session-row-new"
          >
            <span>+ New session in this project</span>
          </li>
        </ul>
      </div>
    </div>
  );
}
