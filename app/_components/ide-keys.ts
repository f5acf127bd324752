"use client";
// The IDE's keys, VS Code's where it has them. The pane-switching chords are caught before any
// widget sees them (window, capture phase), so they work with the cursor in the terminal or the
// editor too: xterm would otherwise send them to the shell as control characters. Save and Esc
// are left to the focused widget first (the editor saves itself; an approval card takes Esc).
// Showing and hiding panes (Ctrl+B, Ctrl+J, Ctrl+Alt+B) is reading too: a viewer may do it.
import { useEffect, useRef } from "react";

export interface IdeKeyActions {
  search(): void;
  /** Search with Replace open. */
  replace(): void;
  explorer(): void;
  changes(): void;
  quickOpen(): void;
  commandPalette(): void;
  togglePreview(): void;
  toggleTerminal(): void;
  /** The bottom panel (the terminal) shown or hidden, focus or not (Ctrl+J). */
  togglePanel(): void;
  /** The side bar: files, search, changes (Ctrl+B). */
  toggleSideBar(): void;
  /** The chat pane (Ctrl+Alt+B, VS Code's secondary side bar). */
  toggleChat(): void;
  newTerminal(): void;
  save(): void;
  /** Focus the oldest pending approval card; false when there is none (the key is not taken,
   *  so Ctrl+Alt+A still types what it types on layouts where that is AltGr+A). */
  approval(): boolean;
  /** Esc nobody else took: stop the running turn. */
  escape(): void;
}

/** The chord's action name, or undefined. Exported for tests. */
export function chordOf(
  e: Pick<KeyboardEvent, "ctrlKey" | "metaKey" | "shiftKey" | "altKey" | "code" | "key">,
): keyof IdeKeyActions | undefined {
  if (!(e.ctrlKey || e.metaKey)) return undefined;
  if (e.shiftKey && e.code === "KeyF") return "search";
  if (e.shiftKey && e.code === "KeyH") return "replace";
  if (e.shiftKey && e.code === "KeyE") return "explorer";
  if (e.shiftKey && e.code === "KeyG") return "changes";
  if (e.altKey && e.code === "KeyP") return "togglePreview";
  if (e.altKey && !e.shiftKey && e.code === "KeyB") return "toggleChat";
  if (!e.shiftKey && !e.altKey && e.code === "KeyB") return "toggleSideBar";
  if (!e.shiftKey && !e.altKey && e.code === "KeyJ") return "togglePanel";
  if (e.altKey && !e.shiftKey && e.code === "KeyA") return "approval";
  if (e.shiftKey && e.code === "Backquote") return "newTerminal";
  if (!e.shiftKey && !e.altKey && (e.code === "Backquote" || e.key === "`")) return "toggleTerminal";
  if (!e.shiftKey && !e.altKey && e.key.toLowerCase() === "p") return "quickOpen";
  if (e.shiftKey && !e.altKey && e.code === "KeyP") return "commandPalette";
  return undefined;
}

const READING = new Set<keyof IdeKeyActions>([
  "search",
  "explorer",
  "changes",
  "quickOpen",
  "commandPalette",
  "toggleSideBar",
  "togglePanel",
  "toggleChat",
]);

/** `readOnly`: only the reading keys (views, quick open, the palette) act. */
export function useIdeKeys(actions: IdeKeyActions, readOnly: boolean): void {
  const ref = useRef(actions);
  ref.current = actions;
  useEffect(() => {
    const onChord = (e: KeyboardEvent) => {
      const chord = chordOf(e);
      if (!chord || (readOnly && !READING.has(chord))) return;
      if (ref.current[chord]() === false) return;
      e.preventDefault();
      e.stopPropagation();
    };
    const onKey = (e: KeyboardEvent) => {
      if (readOnly) return;
      if ((e.ctrlKey || e.metaKey) && !e.shiftKey && !e.altKey && e.key.toLowerCase() === "s") {
        e.preventDefault();
        ref.current.save();
      } else if (e.key === "Escape" && !e.defaultPrevented) ref.current.escape();
    };
    window.addEventListener("keydown", onChord, true);
    window.addEventListener("keydown", onKey);
    return () => {
      window.removeEventListener("keydown", onChord, true);
      window.removeEventListener("keydown", onKey);
    };
  }, [readOnly]);
}
