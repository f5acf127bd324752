"use client";
// A unified diff as coloured lines (plain text, never HTML).
import styles from "./chat.module.css";

export function DiffText({ text }: { text: string }) {
  const lines = text.split("\n").slice(0, 4000);
  return (
    <pre className={styles.diff} data-testid="diff-text">
      {lines.map((l, i) => (
        <div key={i} className={l.startsWith("@@") ? styles.hunk : l.startsWith("+") && !l.startsWith("+++") ? styles.add : l.startsWith("-") && !l.startsWith("---") ? styles.del : undefined}>
          {l || " "}
        </div>
      ))}
    </pre>
  );
}
