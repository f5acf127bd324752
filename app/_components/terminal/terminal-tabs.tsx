"use client";
// Terminals of a session: tabs over the terminal pane, each its own shell on the runner (a dev
// server in one, commands in another), like VS Code's. The tabs are the session's, not the
// page's: a list socket (/terminal?list=1) tells every page of the session which terminals
// exist, so a second page or a reload shows the same tabs attached to the same shells (with
// their scrollback). + (or Ctrl+Shift+`) opens one, × closes it and ends its shell at once for
// every page; an ended terminal's tab says why (exited, the idle limit, its runner lost) and ×
// removes it. Every terminal stays attached while hidden, so its output keeps arriving. With no
// page open a terminal keeps running up to the server's idle limit, shown in the tab bar.
import dynamic from "next/dynamic";
import { useCallback, useEffect, useRef, useState } from "react";
import type { TerminalState } from "./xterm-view";
import { useIdeCommand } from "../../_lib/ide-bus";
import type { LinkTarget } from "../../_lib/terminal-links";
import { describeEnd, type TerminalInfo, type TerminalServerMessage } from "../../../server/protocol/terminal";
import styles from "./terminal.module.css";

const XtermView = dynamic(() => import("./xterm-view"), { ssr: false });

const newId = () => `t${Math.random().toString(36).slice(2, 12)}`;
const activeKey = (sessionId: string) => `quiver.term.active.${sessionId}`;

interface Listed {
  terminals: TerminalInfo[];
  idleMinutes: number;
}

/** The session's terminal list, kept current over a list socket (reconnecting after a drop). */
function useSessionTerminals(sessionId: string): {
  listed: Listed | null;
  forget(term: string): void;
  stop(term: string): void;
  interrupt(term: string, socket: string, key: string, after: number): void;
} {
  const [listed, setListed] = useState<Listed | null>(null);
  const sock = useRef<WebSocket | null>(null);
  useEffect(() => {
    let disposed = false;
    let retry: ReturnType<typeof setTimeout> | undefined;
    let attempt = 0;
    const connect = () => {
      if (disposed) return;
      const q = new URLSearchParams({ session: sessionId, list: "1" });
      const ws = new WebSocket(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/terminal?${q}`);
      sock.current = ws;
      ws.onmessage = (e) => {
        const msg = JSON.parse(String(e.data)) as TerminalServerMessage;
        if (msg.type !== "terminals") return;
        attempt = 0;
        setListed({ terminals: msg.terminals, idleMinutes: msg.idleMinutes });
      };
      ws.onclose = () => {
        if (disposed || sock.current !== ws) return;
        retry = setTimeout(connect, Math.min(5_000, 300 * 2 ** attempt++));
      };
    };
    connect();
    return () => {
      disposed = true;
      clearTimeout(retry);
      sock.current?.close();
      sock.current = null;
    };
  }, [sessionId]);
  const forget = useCallback((term: string) => {
    const ws = sock.current;
    if (ws?.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ type: "forget", term }));
  }, []);
  // Also said on the terminal's own socket; this one is read even while that one is paused
  // behind input its program does not read (the server's input flow control).
  const stop = useCallback((term: string) => {
    const ws = sock.current;
    if (ws?.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ type: "close", term }));
  }, []);
  // An interrupt key must be able to skip input its terminal's socket is paused behind.
  const interrupt = useCallback((term: string, socket: string, key: string, after: number) => {
    const ws = sock.current;
    if (ws?.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ type: "interrupt", term, socket, key, after }));
  }, []);
  return { listed, forget, stop, interrupt };
}

interface Props {
  sessionId: string;
  onState(s: TerminalState): void;
  /** Links in the output (xterm-view.tsx): which paths are workspace files, and what a Ctrl+click does. */
  isFile?(path: string): boolean;
  onLink?(target: LinkTarget): void;
}

/** The IDE bus's "terminal.focus" focuses the shown terminal, "terminal.new" opens one. */
export function TerminalTabs({ sessionId, onState, isFile, onLink }: Props) {
  const { listed, forget, stop, interrupt } = useSessionTerminals(sessionId);
  // Opened here and not listed by the server yet; closed here and maybe still listed.
  const [pending, setPending] = useState<string[]>([]);
  const [closed, setClosed] = useState<ReadonlySet<string>>(new Set());
  const [active, setActive] = useState<string | null>(null);
  const [states, setStates] = useState<Record<string, TerminalState>>({});
  const [focus, setFocus] = useState(0);
  const closing = useRef(new Set<string>());

  const known = listed?.terminals ?? [];
  const listedIds = new Set(known.map((t) => t.term));
  const ids = [...known.map((t) => t.term), ...pending.filter((id) => !listedIds.has(id))].filter(
    (id) => !closed.has(id),
  );
  const info = new Map(known.map((t) => [t.term, t]));

  useEffect(() => {
    if (listed) setPending((p) => (p.some((id) => listedIds.has(id)) ? p.filter((id) => !listedIds.has(id)) : p));
    // listedIds is derived from listed
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [listed]);

  /** A new terminal; `focus` when the person asked for it (a shell opened because none was
   *  left must not take the keyboard from where the person is). */
  const add = useCallback((focus = true) => {
    const id = newId();
    setPending((p) => [...p, id]);
    setActive(id);
    if (focus) setFocus((n) => n + 1);
  }, []);

  // The first list: a session without terminals gets one; otherwise the tab this page had.
  const started = useRef(false);
  // State, not the ref: the effect below must not act in the same commit as this one.
  const [ready, setReady] = useState(false);
  useEffect(() => {
    if (!listed || started.current) return;
    started.current = true;
    setReady(true);
    const live = listed.terminals.filter((t) => !t.ended);
    if (live.length === 0) add(false);
    else {
      const remembered = sessionStorage.getItem(activeKey(sessionId));
      setActive(listed.terminals.some((t) => t.term === remembered) ? remembered : live[live.length - 1].term);
    }
  }, [listed, add, sessionId]);

  // The active tab went away (closed here or elsewhere): its neighbour takes its place; none
  // left while the pane is open: a fresh shell.
  const shown = active && ids.includes(active) ? active : (ids[ids.length - 1] ?? null);
  useEffect(() => {
    if (!ready) return;
    if (shown !== active) setActive(shown);
    if (shown === null) add(false);
  }, [shown, active, ready, add]);
  useEffect(() => {
    if (active) sessionStorage.setItem(activeKey(sessionId), active);
  }, [active, sessionId]);

  useEffect(() => {
    if (shown) onState(states[shown] ?? "connecting");
  }, [shown, states, onState]);
  useIdeCommand("terminal.focus", () => setFocus((n) => n + 1));
  useIdeCommand("terminal.new", () => add());

  const close = (id: string) => {
    const ended = info.get(id)?.ended;
    if (ended) forget(id);
    else {
      closing.current.add(id);
      stop(id);
    }
    setClosed((c) => new Set(c).add(id));
  };

  if (!listed || ids.length === 0) return <div className={styles.pane} data-testid="terminal-tabs-loading" />;
  const idle = `Terminals keep running with no page open for ${listed.idleMinutes} min, then end`;
  return (
    <div className={styles.pane}>
      <div className={styles.tabs} role="tablist" aria-label="Terminals" data-testid="terminal-tabs">
        {ids.map((id, i) => {
          const ended = info.get(id)?.ended;
          const state = ended ? "ended" : (states[id] ?? "connecting");
          return (
            <div
              key={id}
              role="tab"
              aria-selected={id === shown}
              className={id === shown ? styles.tabActive : styles.tab}
              onClick={() => (setActive(id), setFocus((n) => n + 1))}
              title={ended ? `Terminal ${i + 1} ${describeEnd(ended)}` : undefined}
              data-testid="terminal-tab"
              data-term={id}
              data-state={state}
            >
              <span>Terminal {i + 1}</span>
              {ended && (
                <span className={styles.ended} data-testid="terminal-ended">
                  {describeEnd(ended)}
                </span>
              )}
              <button
                type="button"
                className={styles.close}
                aria-label={`Close terminal ${i + 1}`}
                title={ended ? "Remove this tab" : "Close (ends its shell)"}
                onClick={(e) => (e.stopPropagation(), close(id))}
                data-testid="terminal-close"
              >
                ×
              </button>
            </div>
          );
        })}
        <button
          type="button"
          className={styles.add}
          aria-label="New terminal"
          title="New terminal (Ctrl+Shift+`)"
          onClick={() => add()}
          data-testid="terminal-new"
        >
          +
        </button>
        <span className={styles.idle} title={idle} data-testid="terminal-idle">
          kept {listed.idleMinutes} min without a page
        </span>
      </div>
      {ids.map((id) => (
        <div key={id} className={styles.view} hidden={id !== shown}>
          <XtermView
            sessionId={sessionId}
            termId={id}
            onState={(s) => setStates((m) => (m[id] === s ? m : { ...m, [id]: s }))}
            focusSignal={id === shown ? focus : 0}
            ending={() => closing.current.has(id)}
            isFile={isFile}
            onLink={onLink}
            startedAt={info.get(id)?.ended ? undefined : info.get(id)?.createdAt}
            interrupt={(socket, key, after) => interrupt(id, socket, key, after)}
          />
        </div>
      ))}
    </div>
  );
}
