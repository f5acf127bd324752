"use client";
// Ctrl/Cmd-P: type part of a path, arrows to choose, Enter opens, Esc closes. Matching is
// subsequence-based with a bonus for matches in the file name, like VS Code's.
import { useMemo, useState } from "react";
import styles from "./editor.module.css";

export function score(path: string, query: string): number {
  if (!query) return 1;
  const p = path.toLowerCase();
  const q = query.toLowerCase();
  const nameStart = p.lastIndexOf("/") + 1;
  let at = -1;
  let s = 0;
  for (const ch of q) {
    const next = p.indexOf(ch, at + 1);
    if (next < 0) return 0;
    s += next === at + 1 ? 3 : 1;
    if (next >= nameStart) s += 2;
    at = next;
  }
  return s - path.length / 1000;
}

export function QuickOpen({ paths, onOpen, onClose }: { paths: string[]; onOpen(path: string): void; onClose(): void }) {
  const [query, setQuery] = useState("");
  const [sel, setSel] = useState(0);
  const matches = useMemo(
    () =>
      paths
        .map((p) => ({ p, s: score(p, query) }))
        .filter((m) => m.s > 0)
        .sort((a, b) => b.s - a.s)
        .slice(0, 50)
        .map((m) => m.p),
    [paths, query],
  );
  const choose = (p: string | undefined) => {
    if (p) onOpen(p);
    onClose();
  };
  return (
    <div className={styles.quick} onClick={onClose}>
      <div className={styles.quickBox} onClick={(e) => e.stopPropagation()} role="dialog" aria-label="Quick open" data-testid="quick-open">
        <input
          autoFocus
          placeholder="Go to file…"
          value={query}
          onChange={(e) => (setQuery(e.target.value), setSel(0))}
          onKeyDown={(e) => {
            const moves: Record<string, () => void> = {
              ArrowDown: () => setSel((s) => Math.min(matches.length - 1, s + 1)),
              ArrowUp: () => setSel((s) => Math.max(0, s - 1)),
              Enter: () => choose(matches[sel]),
              Escape: () => {
                e.stopPropagation();
                onClose();
              },
            };
            const move = moves[e.key];
            if (!move) return;
            e.preventDefault();
            move();
          }}
        />
        <ul className={styles.quickList}>
          {matches.map((p, i) => (
            <li key={p} className={i === sel ? styles.quickSel : undefined} onMouseEnter={() => setSel(i)} onClick={() => choose(p)}>
              {p}
            </li>
          ))}
          {matches.length === 0 && <li className="muted">No matching files</li>}
        </ul>
      </div>
    </div>
  );
}
