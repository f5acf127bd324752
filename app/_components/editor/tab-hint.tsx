"use client";
// The first Tab pressed in the editor inserts a tab, as in any code editor, and shows a small
// hint once per browser: Ctrl+M (Ctrl+Shift+M on a Mac) switches Monaco's tab-focus mode, in
// which Tab moves focus out of the editor instead. The hint is a polite status a screen reader
// reads, and goes away on its own, on Escape or on its button.
import { useCallback, useEffect, useState } from "react";
import styles from "./tab-hint.module.css";

const KEY = "quiver.editorTabHint";
const SHOWN_MS = 10_000;

export function useTabHint(): { hint: boolean; onTab(): void; dismiss(): void } {
  const [hint, setHint] = useState(false);
  const onTab = useCallback(() => {
    try {
      if (localStorage.getItem(KEY)) return;
      localStorage.setItem(KEY, "1");
    } catch {
      // Storage refused (private mode): the hint may show again next time, which is harmless.
    }
    setHint(true);
  }, []);
  const dismiss = useCallback(() => setHint(false), []);
  useEffect(() => {
    if (!hint) return;
    const timer = setTimeout(() => setHint(false), SHOWN_MS);
    return () => clearTimeout(timer);
  }, [hint]);
  return { hint, onTab, dismiss };
}

export function TabHint({ shown, onDismiss }: { shown: boolean; onDismiss(): void }) {
  return (
    <div role="status" aria-live="polite" className={shown ? styles.hint : styles.hidden} data-testid="editor-tab-hint">
      {shown && (
        <>
          <span>
            Tab inserts a tab here. To leave the editor with Tab, press <kbd>Ctrl</kbd>+<kbd>M</kbd> (<kbd>Ctrl</kbd>+
            <kbd>Shift</kbd>+<kbd>M</kbd> on a Mac) to switch tab-focus mode on or off.
          </span>
          <button type="button" onClick={onDismiss} aria-label="Dismiss the hint">
            ×
          </button>
        </>
      )}
    </div>
  );
}
