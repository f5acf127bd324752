"use client";
// The inline name box of the file tree (new file, new folder, rename), in the row where the
// item will be. Enter or leaving the box applies a usable name; Escape, or leaving it empty or
// unchanged, cancels. A name that cannot be used is explained under the box and the box stays,
// as does one the runner refused, so nothing typed is lost.
import { useEffect, useRef, useState, type KeyboardEvent } from "react";
import { checkName, initialName, nameSelection, type TreeEdit } from "./tree-edit";
import type { TreeEntry } from "../../../server/protocol/ide-types";
import styles from "./files.module.css";

interface Props {
  edit: TreeEdit;
  depth: number;
  exists: (path: string) => TreeEntry["type"] | false;
  /** Applies the change; rejects with the runner's reason. */
  onSubmit(path: string): Promise<void>;
  onCancel(): void;
}

export function TreeNameBox({ edit, depth, exists, onSubmit, onCancel }: Props) {
  const [value, setValue] = useState(() => initialName(edit));
  const [refused, setRefused] = useState<string>();
  const [busy, setBusy] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  const check = checkName(edit, value, exists);
  // An empty box is not an error until the person tries to apply it.
  const [tried, setTried] = useState(false);
  const problem = refused ?? (!check.ok && (tried || value.trim() !== "") ? check.message : undefined);

  useEffect(() => {
    const el = input.current;
    if (!el) return;
    el.focus();
    el.setSelectionRange(...nameSelection(el.value));
  }, []);

  const apply = async (leaving: boolean) => {
    if (busy) return;
    if (!check.ok || check.unchanged) {
      // Leaving an empty or unchanged box is a cancel; leaving a bad name keeps it on screen.
      if ((check.ok && check.unchanged) || (leaving && !value.trim())) return onCancel();
      setTried(true);
      if (!leaving) input.current?.focus();
      return;
    }
    setBusy(true);
    try {
      await onSubmit(check.path);
    } catch (err) {
      setRefused((err as Error).message);
      setBusy(false);
      input.current?.focus();
    }
  };

  const onKeyDown = (e: KeyboardEvent) => {
    // The tree's own keys (arrows, F2, Delete) must not act while a name is typed.
    e.stopPropagation();
    if (e.key === "Enter") {
      e.preventDefault();
      void apply(false);
    } else if (e.key === "Escape") {
      e.preventDefault();
      onCancel();
    }
  };

  const label =
    edit.kind === "rename" ? `New name for ${edit.path}` : edit.type === "dir" ? "New folder name" : "New file name";
  return (
    <div className={styles.editRow} style={{ paddingLeft: 8 + depth * 12 }}>
      <span className={styles.icon}>{edit.type === "dir" ? "▸" : ""}</span>
      <div className={styles.editBox}>
        <input
          ref={input}
          className={problem ? styles.invalid : undefined}
          value={value}
          disabled={busy}
          aria-label={label}
          aria-invalid={!!problem}
          data-testid="tree-name-input"
          spellCheck={false}
          onChange={(e) => (setValue(e.target.value), setRefused(undefined))}
          onKeyDown={onKeyDown}
          onBlur={() => void apply(true)}
        />
        {problem && (
          <div className={styles.problem} role="alert" data-testid="tree-name-problem">
            {problem}
          </div>
        )}
      </div>
    </div>
  );
}
