"use client";
// The ⋯ menu on a message the person sent: put the files back to before that turn, rewind the
// conversation to it, or both. Each choice opens a preview first (rewind-dialog.tsx). While a
// turn runs the choices are disabled and say why (the server refuses a rewind then too). Keyboard:
// Enter/Space/↓ open it on the first choice, ↑/↓ move, Esc closes it back onto the button.
import { useEffect, useRef, useState } from "react";
import styles from "./rewind.module.css";

export type RewindKind = "files" | "conversation" | "both";

const CHOICES: Array<[RewindKind, string, string]> = [
  [
    "files",
    "Restore files to before this turn",
    "Put back the files as they were before the agent worked on this message",
  ],
  [
    "conversation",
    "Rewind the conversation to here",
    "The agent forgets this message and everything after it; your message goes back in the box",
  ],
  ["both", "Rewind both", "Restore the files and rewind the conversation to before this message"],
];

export const RUNNING_REASON = "The agent is working: stop it or wait for the turn to end before rewinding.";

interface Props {
  running: boolean;
  onChoose(kind: RewindKind): void;
}

export function TurnMenu({ running, onChoose }: Props) {
  const [open, setOpen] = useState(false);
  const button = useRef<HTMLButtonElement>(null);
  const menu = useRef<HTMLDivElement>(null);
  const items = () => [...(menu.current?.querySelectorAll<HTMLButtonElement>("[role=menuitem]") ?? [])];

  useEffect(() => {
    if (!open) return;
    items()[0]?.focus();
    const away = (e: MouseEvent) => {
      if (!menu.current?.contains(e.target as Node) && !button.current?.contains(e.target as Node)) setOpen(false);
    };
    document.addEventListener("mousedown", away);
    return () => document.removeEventListener("mousedown", away);
  }, [open]);

  const close = () => {
    setOpen(false);
    button.current?.focus();
  };
  const onMenuKey = (e: React.KeyboardEvent) => {
    const all = items();
    const at = all.indexOf(document.activeElement as HTMLButtonElement);
    if (e.key === "Escape") {
      e.preventDefault();
      e.stopPropagation();
      close();
    } else if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      e.preventDefault();
      all[(at + (e.key === "ArrowDown" ? 1 : all.length - 1)) % all.length]?.focus();
    } else if (e.key === "Tab") setOpen(false);
  };

  return (
    <div className={styles.menuHost}>
      <button
        ref={button}
        type="button"
        className={styles.menuButton}
        aria-haspopup="menu"
        aria-expanded={open}
        aria-label="Rewind to this message"
        title="Restore files or rewind the conversation to before this message"
        onClick={() => setOpen((o) => !o)}
        onKeyDown={(e) => {
          if (e.key === "ArrowDown" && !open) {
            e.preventDefault();
            setOpen(true);
          }
        }}
        data-testid="turn-menu"
      >
        ⋯
      </button>
      {open && (
        <div ref={menu} className={styles.menu} role="menu" aria-label="Rewind" onKeyDown={onMenuKey}>
          {CHOICES.map(([kind, label, hint]) => (
            <button
              key={kind}
              type="button"
              role="menuitem"
              // aria-disabled, not disabled: the choices stay reachable by keyboard and say why.
              aria-disabled={running}
              className={running ? styles.menuDisabled : undefined}
              title={running ? RUNNING_REASON : hint}
              onClick={() => {
                if (running) return;
                setOpen(false);
                onChoose(kind);
              }}
              data-testid={`rewind-${kind}`}
            >
              {label}
            </button>
          ))}
          {running && (
            <div className={styles.menuNote} role="note">
              {RUNNING_REASON}
            </div>
          )}
        </div>
      )}
    </div>
  );
}

/** Under a finished turn that changed files: its review, and Undo (the files restore's preview):
 *  any turn is undone in two clicks, Undo then Confirm. */
export function TurnLinks({
  files,
  running,
  onReview,
  onUndo,
}: {
  files: number;
  running: boolean;
  onReview?(): void;
  onUndo(): void;
}) {
  return (
    <div className={styles.links}>
      <span>
        {files} {files === 1 ? "file" : "files"} changed
      </span>
      {onReview && (
        <button type="button" className={styles.link} onClick={onReview} data-testid="turn-review">
          Review changes
        </button>
      )}
      <button
        type="button"
        className={styles.link}
        aria-disabled={running}
        title={running ? RUNNING_REASON : "Put the files back as they were before this turn (shows what changes first)"}
        onClick={() => !running && onUndo()}
        data-testid="turn-undo"
      >
        Undo
      </button>
    </div>
  );
}
