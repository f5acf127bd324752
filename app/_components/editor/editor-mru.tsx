"use client";
// The Ctrl+Tab list of open editors, most recently used first (app/_lib/editor-mru.ts): shown
// while Ctrl is held, Tab walks it, letting go of Ctrl opens the offered editor, Esc keeps the
// current one. The keys are caught before any widget (window, capture phase) so they work from
// the editor and the terminal too.
import { useEffect, useRef, useState } from "react";
import { useIdeCommand } from "../../_lib/ide-bus";
import { mruOrder, mruStep, stepIndex } from "../../_lib/editor-mru";
import styles from "./editor.module.css";
import { VisibleText } from "../../_lib/visible-text";

interface MruFiles {
  tabs: { open: string[]; active: string | null };
  recent: string[];
  setActive(path: string): void;
}

export function EditorMru({ files }: { files: MruFiles }) {
  const [pick, setPick] = useState<{ order: string[]; index: number } | null>(null);
  const ref = useRef({ files, pick });
  ref.current = { files, pick };
  // The palette's "Open Previous Editor": the one used before this one, at once.
  useIdeCommand("editor.previous", () => {
    const order = mruOrder(files.tabs.open, files.recent, files.tabs.active);
    if (order.length > 1) files.setActive(order[1]);
  });

  useEffect(() => {
    const choose = (path: string | undefined) => {
      setPick(null);
      if (path) ref.current.files.setActive(path);
    };
    const onDown = (e: KeyboardEvent) => {
      const { files: f, pick: p } = ref.current;
      const step = mruStep(e);
      if (step) {
        const order = p?.order ?? mruOrder(f.tabs.open, f.recent, f.tabs.active);
        if (order.length < 2) return;
        e.preventDefault();
        e.stopPropagation();
        const index = p ? stepIndex(p.index, order.length, step) : step === 1 ? 1 : order.length - 1;
        setPick({ order, index });
      } else if (p && e.key === "Escape") {
        e.preventDefault();
        e.stopPropagation();
        setPick(null);
      } else if (p && e.key === "Enter") {
        e.preventDefault();
        e.stopPropagation();
        choose(p.order[p.index]);
      }
    };
    const onUp = (e: KeyboardEvent) => {
      const p = ref.current.pick;
      if (p && (e.key === "Control" || !e.ctrlKey)) choose(p.order[p.index]);
    };
    const onBlur = () => setPick(null);
    window.addEventListener("keydown", onDown, true);
    window.addEventListener("keyup", onUp, true);
    window.addEventListener("blur", onBlur);
    return () => {
      window.removeEventListener("keydown", onDown, true);
      window.removeEventListener("keyup", onUp, true);
      window.removeEventListener("blur", onBlur);
    };
  }, []);

  if (!pick) return null;
  return (
    <div className={styles.quick} onClick={() => setPick(null)}>
      <div
        className={styles.quickBox}
        role="dialog"
        aria-modal="true"
        aria-label="Open editors, most recently used first"
        data-testid="editor-mru"
        onClick={(e) => e.stopPropagation()}
      >
        <ul className={styles.quickList} role="listbox" aria-label="Open editors">
          {pick.order.map((p, i) => (
            <li
              key={p}
              role="option"
              aria-selected={i === pick.index}
              className={i === pick.index ? styles.quickSel : undefined}
              onClick={() => (setPick(null), files.setActive(p))}
              data-testid="editor-mru-item"
              data-path={p}
            >
              <span>
                <VisibleText text={p.split("/").pop()!} name />
              </span>
              <span className={styles.quickKeys}>
                <VisibleText text={p} name />
              </span>
            </li>
          ))}
        </ul>
      </div>
    </div>
  );
}
