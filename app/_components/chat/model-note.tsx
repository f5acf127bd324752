"use client";
// A result whose text was written for the model (a `respond` error telling it how to fix its
// next call, a refusal, a note on how to read a cut output) is shown to the person as a one-line
// note; the exact text the model got is behind a details toggle (pipeline/person.ts makes both).
import styles from "./tool-card.module.css";

export function ModelNote({ note, modelText }: { note?: string; modelText?: string }) {
  return (
    <>
      {note && (
        <div className={styles.note} data-testid="tool-note">
          {note}
        </div>
      )}
      {modelText && (
        <details className={styles.modelText} data-testid="tool-model-text">
          <summary>What the model was told</summary>
          <pre>{modelText}</pre>
        </details>
      )}
    </>
  );
}
