"use client";
// The frame's other three panes: the live preview (which keeps the last place another pane asked
// it to show, "preview.open" on the IDE bus, across being closed and opened), the chat, and the
// terminal in the bottom panel (its connection state on the pane, for the page and its tests).
import { useState } from "react";
import { useIdeCommand } from "../../_lib/ide-bus";
import type { SessionState } from "../../_lib/session-state";
import { PreviewPane, type PreviewRequest } from "../preview/preview-pane";
import { ChatPane } from "../chat/chat-pane";
import { TerminalTabs } from "../terminal/terminal-tabs";
import type { TerminalState } from "../terminal/xterm-view";
import type { Workspace } from "./use-workspace";
import styles from "../ide-frame.module.css";

export function PreviewSection({
  sessionId,
  shown,
  readOnly,
}: {
  sessionId: string;
  shown: boolean;
  readOnly: boolean;
}) {
  const [request, setRequest] = useState<PreviewRequest | null>(null);
  useIdeCommand("preview.open", setRequest);
  return (
    <section className={styles.preview} aria-label="Preview" data-testid="pane-preview" hidden={!shown}>
      {shown && !readOnly && <PreviewPane sessionId={sessionId} visible={shown} request={request} />}
    </section>
  );
}

interface ChatProps {
  sessionId: string;
  state: SessionState;
  ws: Workspace;
  shown: boolean;
  onSent(): void;
  onLoadEarlier(): Promise<void>;
}

export function ChatSection({ sessionId, state, ws, shown, onSent, onLoadEarlier }: ChatProps) {
  return (
    // Hidden, not unmounted: a draft message, attachments and scroll position survive.
    <aside className={styles.chat} aria-label="Chat" data-testid="pane-chat" hidden={!shown}>
      <ChatPane
        sessionId={sessionId}
        state={state}
        onSent={onSent}
        onOpenFile={ws.openToolFile}
        knownPaths={ws.filePaths}
        onLoadEarlier={onLoadEarlier}
        onReview={ws.openReview}
      />
    </aside>
  );
}

interface TerminalProps {
  sessionId: string;
  ws: Workspace;
  shown: boolean;
  readOnly: boolean;
  viewer: boolean;
  runnerUp: boolean;
  /** The pane's element: the keys tell from it whether the person is typing in the terminal. */
  paneRef: React.RefObject<HTMLElement | null>;
}

export function TerminalSection({ sessionId, ws, shown, readOnly, viewer, runnerUp, paneRef }: TerminalProps) {
  const [termState, setTermState] = useState<TerminalState>("connecting");
  return (
    <section
      ref={paneRef}
      className={styles.terminal}
      aria-label="Terminal"
      data-testid="pane-terminal"
      data-state={termState}
      hidden={!shown}
    >
      {readOnly ? (
        <div className={styles.empty}>{viewer ? "The terminal is not shared." : ""}</div>
      ) : runnerUp ? (
        <TerminalTabs sessionId={sessionId} onState={setTermState} isFile={ws.isFile} onLink={ws.onTerminalLink} />
      ) : (
        <div className={styles.empty}>Waiting for the runner…</div>
      )}
    </section>
  );
}
