"use client";
// The IDE's pane layout as React state: the person's layout (sizes, open panes) remembered per
// person in this browser (localStorage, keyed by who the server says they are, so two people
// sharing a browser profile keep their own), fitted to the window as it resizes (pane-layout.ts).
import { useCallback, useEffect, useMemo, useState } from "react";
import { readStored } from "../../_lib/persisted";
import {
  DEFAULT_PREFS,
  dragMax,
  fitLayout,
  isPrefs,
  showPane,
  togglePane,
  type Fitted,
  type LayoutPrefs,
  type SidePane,
} from "./pane-layout";

export type Pane = SidePane | "panel";

export interface IdeLayout {
  prefs: LayoutPrefs;
  fitted: Fitted;
  toggle(pane: Pane): void;
  show(pane: Pane, show?: boolean): void;
  resize(pane: Pane, size: number): void;
  /** The largest size a drag may give the pane now. */
  maxOf(pane: Pane): number;
  /** The grid's track sizes, as CSS variables on the frame. */
  style: React.CSSProperties;
}

function useViewport(): { width: number; height: number } {
  // Before mount (server render) a common laptop size; the first effect replaces it.
  const [view, setView] = useState({ width: 1440, height: 900 });
  useEffect(() => {
    const read = () => setView({ width: window.innerWidth, height: window.innerHeight });
    read();
    window.addEventListener("resize", read);
    return () => window.removeEventListener("resize", read);
  }, []);
  return view;
}

/** `person`: whose layout (undefined until the server has said; nothing is stored meanwhile). */
export function useIdeLayout(person: string | undefined, can: { preview: boolean }): IdeLayout {
  const key = person ? `quiver.layout.person.${person}` : undefined;
  const [prefs, setPrefs] = useState<LayoutPrefs>(DEFAULT_PREFS);
  const [loadedKey, setLoadedKey] = useState<string>();
  useEffect(() => {
    if (!key) return;
    setPrefs(readStored(key, DEFAULT_PREFS, isPrefs));
    setLoadedKey(key);
  }, [key]);
  useEffect(() => {
    if (!key || loadedKey !== key) return;
    try {
      localStorage.setItem(key, JSON.stringify(prefs));
    } catch {
      // Storage full or disabled: the layout simply is not remembered.
    }
  }, [key, loadedKey, prefs]);

  const view = useViewport();
  const fitted = useMemo(() => fitLayout(prefs, view, can), [prefs, view, can]);
  const toggle = useCallback(
    (pane: Pane) => setPrefs((p) => togglePane(p, fitLayout(p, view, can), pane)),
    [view, can],
  );
  const show = useCallback(
    (pane: Pane, on = true) =>
      setPrefs((p) =>
        pane === "panel"
          ? { ...p, panelOpen: on }
          : fitLayout(p, view, can).shown[pane] === on
            ? p
            : showPane(p, pane, on),
      ),
    [view, can],
  );
  const resize = useCallback((pane: Pane, size: number) => setPrefs((p) => ({ ...p, [pane]: size })), []);
  const maxOf = useCallback((pane: Pane) => dragMax(fitted, pane, view), [fitted, view]);
  const split = (on: boolean) => (on ? "4px" : "0px");
  const style = {
    "--files-w": `${fitted.side}px`,
    "--fsplit-w": split(fitted.shown.side),
    "--chat-w": `${fitted.chat}px`,
    "--csplit-w": split(fitted.shown.chat),
    "--preview-w": `${fitted.preview}px`,
    "--psplit-w": split(fitted.shown.preview),
    "--term-h": `${fitted.panel}px`,
    "--tsplit-h": split(fitted.shown.panel),
  } as React.CSSProperties;
  return { prefs, fitted, toggle, show, resize, maxOf, style };
}
