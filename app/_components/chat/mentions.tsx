"use client";
// `@` in the message box names a workspace file: typing `@` and part of a path lists the files
// that match (ranked as quick open ranks them), and Enter or Tab puts `@path` in the message,
// which the model reads as the file to look at. Esc closes the list without stopping the turn.
import { useState, type KeyboardEvent } from "react";
import { ranked } from "../editor/palette";
import styles from "./chat.module.css";

const SHOWN = 8;

/** The `@word` the caret is at the end of, if any: where it starts and what follows the `@`. */
export function mentionAt(text: string, caret: number): { start: number; query: string } | null {
  const m = /(^|\s)@([^\s@]*)$/.exec(text.slice(0, caret));
  return m ? { start: caret - m[2].length - 1, query: m[2] } : null;
}

/** The text with the mention at the caret replaced by `@path `, and where the caret goes. */
export function insertMention(text: string, caret: number, path: string): { text: string; caret: number } {
  const at = mentionAt(text, caret);
  if (!at) return { text, caret };
  const inserted = `@${path} `;
  return { text: text.slice(0, at.start) + inserted + text.slice(caret), caret: at.start + inserted.length };
}

export function useMentions(
  draft: string,
  setDraft: (text: string) => void,
  paths: readonly string[],
  box: () => HTMLTextAreaElement | null,
) {
  const [caret, setCaret] = useState(0);
  const [active, setActive] = useState(0);
  // The mention the person closed with Esc (its start), so the list stays shut while they type on.
  const [closedAt, setClosedAt] = useState<number | null>(null);
  const at = mentionAt(draft, caret);
  const matches = at && at.start !== closedAt ? ranked(paths, at.query, (p) => p, SHOWN) : [];

  const choose = (path: string) => {
    const next = insertMention(draft, caret, path);
    setDraft(next.text);
    setCaret(next.caret);
    requestAnimationFrame(() => box()?.setSelectionRange(next.caret, next.caret));
  };

  return {
    /** Keeps track of the caret (from the box's onSelect and onChange). */
    track: (el: HTMLTextAreaElement) => {
      setCaret(el.selectionStart);
      setActive(0);
      if (closedAt !== null && mentionAt(el.value, el.selectionStart)?.start !== closedAt) setClosedAt(null);
    },
    /** True when the key was the list's (the box must not act on it). */
    onKeyDown(e: KeyboardEvent): boolean {
      if (matches.length === 0) return false;
      const move: Record<string, number> = {
        ArrowDown: (active + 1) % matches.length,
        ArrowUp: (active - 1 + matches.length) % matches.length,
      };
      if (e.key in move) setActive(move[e.key]);
      else if (e.key === "Enter" || e.key === "Tab") choose(matches[Math.min(active, matches.length - 1)]);
      else if (e.key === "Escape") setClosedAt(at!.start);
      else return false;
      e.preventDefault();
      return true;
    },
    list:
      matches.length === 0 ? null : (
        <ul className={styles.mentions} role="listbox" aria-label="Workspace files" data-testid="mention-list">
          {matches.map((p, i) => (
            <li
              key={p}
              role="option"
              aria-selected={i === active}
              className={i === active ? styles.mentionActive : undefined}
              onMouseDown={(e) => {
                e.preventDefault();
                choose(p);
              }}
              data-testid="mention-item"
            >
              {p}
            </li>
          ))}
        </ul>
      ),
  };
}
