"use client";
// Search in files (Ctrl+Shift+F): text or regex across the workspace through the runner's
// ripgrep (.gitignore honoured), optionally only in files matching a glob. Results are grouped
// by file; a click opens the file with the match selected. Typing searches after a short pause;
// Enter searches at once; Down from the query walks the results with the arrows (Enter opens).
// A bad regex is shown as the runner's message, nothing else lost. ⇄ opens Replace (replace-row.tsx).
import { useEffect, useRef, useState } from "react";
import { useIdeCommand } from "../../_lib/ide-bus";
import { skipToken, useQuery } from "@tanstack/react-query";
import { useTRPC } from "../../_lib/trpc";
import { useReadOnly } from "../../_lib/read-only";
import { VisibleText } from "../../_lib/visible-text";
import { ReplaceRow } from "./replace-row";
import { around, firstMatch, type SearchOptions } from "./search-model";
import styles from "./search.module.css";

export interface SearchHit {
  path: string;
  line: number;
  /** 1-based columns of the match in the line, when known. */
  column?: number;
  endColumn?: number;
}

const DEBOUNCE_MS = 300;

interface Props {
  sessionId: string;
  onOpen(hit: SearchHit): void;
}

/** The IDE bus's "search.focus" selects the query; "search.replace" opens Replace (Ctrl+Shift+H). */
export function SearchPanel({ sessionId, onOpen }: Props) {
  const trpc = useTRPC();
  const input = useRef<HTMLInputElement>(null);
  const list = useRef<HTMLUListElement>(null);
  /** Moves the focus `by` rows through the result rows (files and matches); from the query to the first. */
  const step = (by: number) => {
    const rows = [...(list.current?.querySelectorAll<HTMLButtonElement>("button") ?? [])];
    const at = rows.indexOf(document.activeElement as HTMLButtonElement);
    if (at < 0 && by < 0) return;
    const next = at + by;
    if (next < 0) input.current?.focus();
    else rows[Math.min(next, rows.length - 1)]?.focus();
  };
  const [draft, setDraft] = useState({ query: "", regex: false, caseSensitive: false, glob: "" });
  const [asked, setAsked] = useState(draft);
  const [folded, setFolded] = useState<Set<string>>(new Set());
  const readOnly = useReadOnly();
  const [replacing, setReplacing] = useState(false);
  useIdeCommand("search.replace", () => setReplacing(true));
  useIdeCommand("search.focus", () => {
    input.current?.focus();
    input.current?.select();
  });
  useEffect(() => {
    const t = setTimeout(() => setAsked(draft), DEBOUNCE_MS);
    return () => clearTimeout(t);
  }, [draft]);

  const query = asked.query.trim() ? asked.query : "";
  const results = useQuery(
    trpc.files.search.queryOptions(
      query
        ? {
            sessionId,
            query,
            regex: asked.regex,
            caseSensitive: asked.caseSensitive || undefined,
            glob: asked.glob.trim() || undefined,
          }
        : skipToken,
      { retry: false, staleTime: 5_000 },
    ),
  );
  const options: SearchOptions = { query, regex: asked.regex, caseSensitive: asked.caseSensitive || undefined };
  const set = (patch: Partial<typeof draft>) => setDraft((d) => ({ ...d, ...patch }));
  const data = query ? results.data : undefined;

  return (
    <div className={styles.pane} data-testid="search-panel">
      <form className={styles.form} onSubmit={(e) => (e.preventDefault(), setAsked(draft))} role="search">
        <div className={styles.row}>
          {!readOnly && (
            <button
              type="button"
              className={styles.opt}
              aria-pressed={replacing}
              title="Toggle Replace"
              onClick={() => setReplacing((r) => !r)}
              data-testid="search-replace-toggle"
            >
              ⇄
            </button>
          )}
          <input
            ref={input}
            className={styles.query}
            value={draft.query}
            onChange={(e) => set({ query: e.target.value })}
            onKeyDown={(e) => e.key === "ArrowDown" && (e.preventDefault(), step(1))}
            placeholder="Search"
            aria-label="Search in files"
            data-testid="search-query"
            spellCheck={false}
          />
          <button
            type="button"
            className={styles.opt}
            aria-pressed={draft.caseSensitive}
            title="Match case"
            onClick={() => set({ caseSensitive: !draft.caseSensitive })}
            data-testid="search-case"
          >
            Aa
          </button>
          <button
            type="button"
            className={styles.opt}
            aria-pressed={draft.regex}
            title="Use regular expression"
            onClick={() => set({ regex: !draft.regex })}
            data-testid="search-regex"
          >
            .*
          </button>
        </div>
        {replacing && !readOnly && (
          <ReplaceRow
            sessionId={sessionId}
            search={options}
            paths={data?.files.map((f) => f.path) ?? []}
            lines={data?.matches ?? 0}
          />
        )}
        <input
          className={styles.glob}
          value={draft.glob}
          onChange={(e) => set({ glob: e.target.value })}
          placeholder="files to include (e.g. *.ts, src/**)"
          aria-label="Files to include"
          data-testid="search-glob"
          spellCheck={false}
        />
      </form>
      <div className={styles.summary} data-testid="search-summary" aria-live="polite">
        {!query ? null : results.error ? (
          <span className={styles.error}>{results.error.message}</span>
        ) : !data ? (
          <span className="muted">Searching…</span>
        ) : data.matches === 0 ? (
          <span className="muted">No results.</span>
        ) : (
          <span className="muted">
            {data.matches} result{data.matches === 1 ? "" : "s"} in {data.files.length} file
            {data.files.length === 1 ? "" : "s"}
            {data.truncated ? " (stopped there: narrow the search)" : ""}
          </span>
        )}
      </div>
      <ul
        ref={list}
        className={styles.results}
        data-testid="search-results"
        onKeyDown={(e) => {
          if (e.key !== "ArrowDown" && e.key !== "ArrowUp") return;
          e.preventDefault();
          step(e.key === "ArrowDown" ? 1 : -1);
        }}
      >
        {data?.files.map((f) => {
          const closed = folded.has(f.path);
          const slash = f.path.lastIndexOf("/");
          return (
            <li key={f.path}>
              <button
                type="button"
                className={styles.file}
                aria-expanded={!closed}
                onClick={() =>
                  setFolded((s) => {
                    const n = new Set(s);
                    if (closed) n.delete(f.path);
                    else n.add(f.path);
                    return n;
                  })
                }
                title={f.path}
                data-testid="search-file"
                data-path={f.path}
              >
                <span className={styles.chevron}>{closed ? "▸" : "▾"}</span>
                <span className={styles.name}>
                  <VisibleText text={f.path.slice(slash + 1)} name />
                </span>
                <span className={styles.dir}>
                  <VisibleText text={slash > 0 ? f.path.slice(0, slash) : ""} name />
                </span>
                <span className={styles.count}>{f.matches.length}</span>
              </button>
              {!closed && (
                <ul>
                  {f.matches.map((m) => {
                    const match = firstMatch(m.text, options);
                    const shown = around(m.text, match);
                    const hit: SearchHit = {
                      path: f.path,
                      line: m.line,
                      ...(match ? { column: match[0] + 1, endColumn: match[1] + 1 } : {}),
                    };
                    return (
                      <li key={m.line}>
                        <button
                          type="button"
                          className={styles.match}
                          onClick={() => onOpen(hit)}
                          title={`${f.path}:${m.line}`}
                          data-testid="search-match"
                          data-path={f.path}
                          data-line={m.line}
                        >
                          <span className={styles.line}>{m.line}</span>
                          {shown.match ? (
                            <span>
                              {shown.text.slice(0, shown.match[0])}
                              <mark>{shown.text.slice(shown.match[0], shown.match[1])}</mark>
                              {shown.text.slice(shown.match[1])}
                            </span>
                          ) : (
                            <span>{shown.text}</span>
                          )}
                        </button>
                      </li>
                    );
                  })}
                </ul>
              )}
            </li>
          );
        })}
      </ul>
    </div>
  );
}
