"use client";
// Find in the terminal's output and scrollback (xterm's search addon): Ctrl+F inside the
// terminal opens this box, typing finds as you go, Enter goes to the next match, Shift+Enter to
// the previous one, Escape closes the box and gives the keyboard back to the shell. It shows
// how many matches there are, and says so when there are none.
import { useEffect, useRef, useState } from "react";
import type { SearchAddon } from "@xterm/addon-search";
import styles from "./terminal-find.module.css";

const DECORATIONS = {
  matchBackground: "#ffd33d",
  matchOverviewRuler: "#ffd33d",
  activeMatchBackground: "#ff9632",
  activeMatchColorOverviewRuler: "#ff9632",
};

interface Props {
  search: SearchAddon;
  onClose(): void;
}

export function TerminalFind({ search, onClose }: Props) {
  const input = useRef<HTMLInputElement>(null);
  const [term, setTerm] = useState("");
  const [results, setResults] = useState<{ index: number; count: number }>();

  useEffect(() => {
    input.current?.focus();
    input.current?.select();
    const sub = search.onDidChangeResults((r) => setResults({ index: r.resultIndex, count: r.resultCount }));
    return () => {
      sub.dispose();
      search.clearDecorations();
    };
  }, [search]);

  const find = (text: string, back: boolean, incremental = false) => {
    if (!text) {
      search.clearDecorations();
      setResults(undefined);
      return;
    }
    const opts = { decorations: DECORATIONS, incremental };
    if (back) search.findPrevious(text, opts);
    else search.findNext(text, opts);
  };

  const label =
    !term || !results
      ? ""
      : results.count === 0
        ? "No results"
        : results.index < 0
          ? `${results.count}+ matches`
          : `${results.index + 1} of ${results.count}`;
  return (
    <div className={styles.find} role="search" aria-label="Find in the terminal" data-testid="terminal-find">
      <input
        ref={input}
        value={term}
        placeholder="Find"
        aria-label="Find in the terminal"
        data-testid="terminal-find-input"
        onChange={(e) => {
          setTerm(e.target.value);
          find(e.target.value, false, true);
        }}
        onKeyDown={(e) => {
          if (e.key === "Enter") {
            e.preventDefault();
            find(term, e.shiftKey);
          } else if (e.key === "Escape") {
            e.preventDefault();
            e.stopPropagation();
            onClose();
          }
        }}
      />
      <span className={styles.count} aria-live="polite" data-testid="terminal-find-count">
        {label}
      </span>
      <button
        type="button"
        onClick={() => find(term, true)}
        aria-label="Previous match (Shift+Enter)"
        title="Previous match (Shift+Enter)"
      >
        ↑
      </button>
      <button
        type="button"
        onClick={() => find(term, false)}
        aria-label="Next match (Enter)"
        title="Next match (Enter)"
      >
        ↓
      </button>
      <button type="button" onClick={onClose} aria-label="Close find (Escape)" title="Close (Escape)">
        ×
      </button>
    </div>
  );
}
