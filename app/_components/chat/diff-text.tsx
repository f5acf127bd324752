"use client";
// A unified diff as coloured lines (plain text, never HTML) with a gutter of the old and new
// line numbers its hunk headers give, so a diff of a real file reads with the file's own numbers.
// Bidi controls and invisible characters in a line show as marks (visible-text.tsx).
import { VisibleText } from "../../_lib/visible-text";
import styles from "./chat.module.css";

type Kind = "head" | "hunk" | "ctx" | "add" | "del" | "note";
export interface DiffRow {
  kind: Kind;
  old?: number;
  new?: number;
  text: string;
}

const MAX_ROWS = 4000;
const HUNK = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

/**
 * Rows of a unified diff. Inside a hunk its header's counts say which lines belong to it, so a
 * removed line that itself starts with "--" is not taken for a file header.
 */
export function diffRows(text: string): DiffRow[] {
  const rows: DiffRow[] = [];
  let oldLine = 0;
  let newLine = 0;
  let oldLeft = 0;
  let newLeft = 0;
  const lines = text.endsWith("\n") ? text.slice(0, -1).split("\n") : text.split("\n");
  for (const l of lines.slice(0, MAX_ROWS)) {
    // A line of a hunk never starts with "@", so a header always starts a new hunk (even when
    // a hand-written patch's counts were wrong).
    const h = HUNK.exec(l);
    const inHunk = !h && (oldLeft > 0 || newLeft > 0);
    if (h) {
      oldLine = Number(h[1]);
      newLine = Number(h[3]);
      oldLeft = h[2] === undefined ? 1 : Number(h[2]);
      newLeft = h[4] === undefined ? 1 : Number(h[4]);
      rows.push({ kind: "hunk", text: l });
    } else if (inHunk && l.startsWith("+")) {
      rows.push({ kind: "add", new: newLine++, text: l });
      newLeft--;
    } else if (inHunk && l.startsWith("-")) {
      rows.push({ kind: "del", old: oldLine++, text: l });
      oldLeft--;
    } else if (inHunk && (l.startsWith(" ") || l === "")) {
      rows.push({ kind: "ctx", old: oldLine++, new: newLine++, text: l });
      oldLeft--;
      newLeft--;
    } else {
      // File headers, "\ No newline at end of file", and the "… cut" lines of a bounded diff.
      rows.push({ kind: l.startsWith("---") || l.startsWith("+++") ? "head" : "note", text: l });
    }
  }
  return rows;
}

const CLASS: Partial<Record<Kind, string>> = { hunk: styles.hunk, add: styles.add, del: styles.del, note: styles.note };

export function DiffText({ text }: { text: string }) {
  const rows = diffRows(text);
  const numbered = rows.some((r) => r.kind === "hunk");
  return (
    <pre className={styles.diff} data-testid="diff-text">
      {rows.map((r, i) => (
        <div key={i} className={`${styles.diffRow} ${CLASS[r.kind] ?? ""}`} data-kind={r.kind}>
          {numbered && (
            <>
              <span className={styles.gutter} data-testid="diff-old-line">
                {r.old ?? ""}
              </span>
              <span className={styles.gutter} data-testid="diff-new-line">
                {r.new ?? ""}
              </span>
            </>
          )}
          <span>{r.text ? <VisibleText text={r.text} /> : " "}</span>
        </div>
      ))}
    </pre>
  );
}
