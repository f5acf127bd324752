"use client";
// The quick-open box, VS Code's: Ctrl/Cmd+P goes to a file by part of its path, ">" (or
// Ctrl/Cmd+Shift+P) runs a command, ":" goes to a line of the open file. Arrows choose, Enter
// runs, Esc closes. With nothing typed, recently opened files come first. What a query means and what matches it: palette.ts. When the tree's listing
// was cut short (a large workspace), files are also looked for across the whole workspace on
// the runner (files.find), ranked together with the listed ones. Enter pressed before any
// match is listed (the workspace's listing or that search still on its way) is kept and opens the
// first match as it comes: a name typed and Enter at once opens the file, not an empty box.
import { useEffect, useMemo, useState } from "react";
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { useTRPC } from "../../_lib/trpc";
import { matchCommands, paletteQuery, ranked, recentFirst, type Command } from "./palette";
import styles from "./editor.module.css";
import { VisibleText } from "../../_lib/visible-text";

interface Props {
  paths: string[];
  /** Files opened, most recent first, and the open one: listed first for an empty query. */
  recent?: readonly string[];
  active?: string | null;
  /** The listing behind `paths` was cut short: ask the runner for files of this session too. */
  findIn?: string;
  /** The workspace's listing behind `paths` has not arrived yet. */
  listing?: boolean;
  commands: Command[];
  /** What the box starts with (">" for the command palette). */
  initial?: string;
  onOpen(path: string): void;
  /** Undefined: no file is open, so ":" has nowhere to go. */
  onGoToLine?(line: number): void;
  onClose(): void;
}

type Row = { key: string; label: string; keys?: string; isPath?: boolean; run(): void };

/** `value`, once it has stayed the same for `ms`. */
function useSettled<T>(value: T, ms: number): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const t = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(t);
  }, [value, ms]);
  return settled;
}

export function QuickOpen({
  paths,
  recent = [],
  active = null,
  findIn,
  listing = false,
  commands,
  initial = "",
  onOpen,
  onGoToLine,
  onClose,
}: Props) {
  const trpc = useTRPC();
  const [query, setQuery] = useState(initial);
  const [sel, setSel] = useState(0);
  const [enterPending, setEnterPending] = useState(false);
  const q = paletteQuery(query);
  const wanted = useSettled(q.mode === "files" ? q.text.trim() : "", 150);
  const found = useQuery(
    trpc.files.find.queryOptions(
      { sessionId: findIn ?? "", query: wanted },
      { enabled: !!findIn && wanted.length > 0, placeholderData: keepPreviousData, staleTime: 10_000 },
    ),
  );
  const candidates = useMemo(
    () => (found.data ? [...new Set([...paths, ...found.data.paths])] : paths),
    [paths, found.data],
  );
  const rows: Row[] = useMemo(() => {
    if (q.mode === "commands")
      return matchCommands(commands, q.text).map((c) => ({ key: c.id, label: c.label, keys: c.keys, run: c.run }));
    if (q.mode === "line") {
      if (!onGoToLine || q.line === null) return [];
      const line = q.line;
      return [{ key: "line", label: `Go to line ${line}`, run: () => onGoToLine(line) }];
    }
    const ordered = q.text ? candidates : recentFirst(candidates, recent, active);
    return ranked(ordered, q.text, (p) => p).map((p) => ({ key: p, label: p, isPath: true, run: () => onOpen(p) }));
    // q is derived from query
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [candidates, recent, active, commands, query, onOpen, onGoToLine]);
  const empty =
    q.mode === "commands"
      ? "No matching commands"
      : q.mode === "line"
        ? onGoToLine
          ? "Type a line number"
          : "Open a file to go to a line"
        : "No matching files";
  const choose = (row: Row) => {
    onClose();
    row.run();
  };
  const waiting = q.mode === "files" && (listing || found.isFetching || (!!findIn && wanted !== q.text.trim()));
  useEffect(() => {
    if (!enterPending) return;
    if (rows.length > 0) {
      setEnterPending(false);
      choose(rows[0]);
    } else if (!waiting) setEnterPending(false);
    // choose is made anew each render; rows and waiting say when to act
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [enterPending, rows, waiting]);
  return (
    <div className={styles.quick} onClick={onClose}>
      <div
        className={styles.quickBox}
        onClick={(e) => e.stopPropagation()}
        role="dialog"
        aria-modal="true"
        aria-label="Quick open"
        data-testid="quick-open"
        data-mode={q.mode}
      >
        <input
          autoFocus
          placeholder="Go to file… (> for commands, : for a line)"
          value={query}
          onChange={(e) => (setQuery(e.target.value), setSel(0), setEnterPending(false))}
          onKeyDown={(e) => {
            const moves: Record<string, () => void> = {
              ArrowDown: () => setSel((s) => Math.min(rows.length - 1, s + 1)),
              ArrowUp: () => setSel((s) => Math.max(0, s - 1)),
              // Nothing listed: kept while matches may still come, else nothing to open.
              Enter: () => (rows[sel] ? choose(rows[sel]) : waiting && setEnterPending(true)),
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
          {rows.map((r, i) => (
            // Selected by a real mouse move only: the browser also reports "entering" a row that
            // appears under a pointer left still, and Enter would then open that row instead.
            <li
              key={r.key}
              className={i === sel ? styles.quickSel : undefined}
              onMouseMove={() => i !== sel && setSel(i)}
              onClick={() => choose(r)}
              data-testid="quick-item"
              aria-selected={i === sel}
            >
              <span>{r.isPath ? <VisibleText text={r.label} name /> : r.label}</span>
              {r.keys && <kbd className={styles.quickKeys}>{r.keys}</kbd>}
            </li>
          ))}
          {rows.length === 0 && (
            <li className="muted">
              {listing && q.mode === "files"
                ? "Listing the workspace…"
                : found.isFetching
                  ? "Looking through the workspace…"
                  : empty}
            </li>
          )}
        </ul>
      </div>
    </div>
  );
}
