"use client";
// Terminals of a session: tabs over the terminal pane, each its own shell on the runner (a dev
// server in one, commands in another), like VS Code's. + (or Ctrl+Shift+`) opens one, × closes
// it and ends its shell at once. Every terminal stays attached while hidden, so its output
// keeps arriving. The tab list lives in sessionStorage with the ids: a reload re-attaches to
// the same shells.
import dynamic from "next/dynamic";
import { useEffect, useRef, useState } from "react";
import type { TerminalState } from "./xterm-view";
import type { LinkTarget } from "../../_lib/terminal-links";
import styles from "./terminal.module.css";

const XtermView = dynamic(() => import("./xterm-view"), { ssr: false });

interface Tabs {
  ids: string[];
  active: string;
}

const newId = () => `t${Math.random().toString(36).slice(2, 12)}`;

function readTabs(sessionId: string): Tabs {
  try {
    const raw = JSON.parse(sessionStorage.getItem(`quiver.terms.${sessionId}`) ?? "null") as Tabs | null;
    if (raw && Array.isArray(raw.ids) && raw.ids.length > 0 && raw.ids.every((id) => /^[A-Za-z0-9_-]{1,64}$/.test(id)) && raw.ids.includes(raw.active)) return raw;
  } catch {
    // unreadable: start over
  }
  // The single terminal of earlier versions keeps its shell.
  const id = sessionStorage.getItem(`quiver.term.${sessionId}`) ?? newId();
  return { ids: [id], active: id };
}

interface Props {
  sessionId: string;
  onState(s: TerminalState): void;
  focusSignal: number;
  newSignal: number;
  /** Links in the output (xterm-view.tsx): which paths are workspace files, and what a Ctrl+click does. */
  isFile?(path: string): boolean;
  onLink?(target: LinkTarget): void;
}

export function TerminalTabs({ sessionId, onState, focusSignal, newSignal, isFile, onLink }: Props) {
  const [tabs, setTabs] = useState<Tabs | null>(null);
  const [states, setStates] = useState<Record<string, TerminalState>>({});
  const [focus, setFocus] = useState(0);
  const closing = useRef(new Set<string>());

  useEffect(() => setTabs(readTabs(sessionId)), [sessionId]);
  useEffect(() => {
    if (tabs) sessionStorage.setItem(`quiver.terms.${sessionId}`, JSON.stringify(tabs));
  }, [sessionId, tabs]);
  const active = tabs?.active;
  useEffect(() => {
    if (active) onState(states[active] ?? "connecting");
  }, [active, states, onState]);
  useEffect(() => {
    if (focusSignal) setFocus((n) => n + 1);
  }, [focusSignal]);

  const add = () => {
    const id = newId();
    setTabs((t) => (t ? { ids: [...t.ids, id], active: id } : t));
    setFocus((n) => n + 1);
  };
  useEffect(() => {
    if (newSignal) add();
  }, [newSignal]);

  const close = (id: string) => {
    closing.current.add(id);
    setTabs((t) => {
      if (!t) return t;
      const at = t.ids.indexOf(id);
      const ids = t.ids.filter((x) => x !== id);
      // The last one closed: a fresh shell takes its place, as the pane stays open.
      if (ids.length === 0) {
        const fresh = newId();
        return { ids: [fresh], active: fresh };
      }
      return { ids, active: t.active === id ? ids[Math.min(at, ids.length - 1)] : t.active };
    });
  };

  if (!tabs) return null;
  return (
    <div className={styles.pane}>
      <div className={styles.tabs} role="tablist" aria-label="Terminals" data-testid="terminal-tabs">
        {tabs.ids.map((id, i) => (
          <div key={id} role="tab" aria-selected={id === tabs.active} className={id === tabs.active ? styles.tabActive : styles.tab} onClick={() => (setTabs({ ...tabs, active: id }), setFocus((n) => n + 1))} data-testid="terminal-tab" data-term={id} data-state={states[id] ?? "connecting"}>
            <span>Terminal {i + 1}</span>
            <button type="button" className={styles.close} aria-label={`Close terminal ${i + 1}`} title="Close (ends its shell)" onClick={(e) => (e.stopPropagation(), close(id))} data-testid="terminal-close">×</button>
          </div>
        ))}
        <button type="button" className={styles.add} aria-label="New terminal" title="New terminal (Ctrl+Shift+`)" onClick={add} data-testid="terminal-new">+</button>
      </div>
      {tabs.ids.map((id) => (
        <div key={id} className={styles.view} hidden={id !== tabs.active}>
          <XtermView
            sessionId={sessionId}
            termId={id}
            onState={(s) => setStates((m) => (m[id] === s ? m : { ...m, [id]: s }))}
            focusSignal={id === tabs.active ? focus : 0}
            ending={() => closing.current.has(id)}
            isFile={isFile}
            onLink={onLink}
          />
        </div>
      ))}
    </div>
  );
}
