"use client";
// The IDE: side bar (files, search, changes) on the left, editor with tabs in the centre, the live
// preview beside the editor when open, chat on the right, the terminal in the bottom panel, a top
// bar and a status bar. This file composes them: the session as the server tells it
// (layout/use-session-frame.ts), its workspace as the panes share it (layout/use-workspace.ts),
// how the panes share the window (layout/use-ide-layout.ts) and what keys, palette and toggles do
// (layout/use-pane-commands.ts); commands reach a pane over the IDE bus (_lib/ide-bus.ts).
// The owner shares the session from here (Share); opened through a share link the IDE is
// read-only: no composer, approvals, terminal, preview or edits, and it says when the link ends.
import Link from "next/link";
import { useMemo, useRef } from "react";
import { useOwnIdeBus } from "../_lib/ide-bus";
import { useSessionFrame } from "./layout/use-session-frame";
import { useWorkspace } from "./layout/use-workspace";
import { useIdeLayout } from "./layout/use-ide-layout";
import { usePaneCommands } from "./layout/use-pane-commands";
import { FrameContext } from "./layout/frame-context";
import { TopBar } from "./layout/top-bar";
import { FrameBanners } from "./layout/frame-banners";
import { StatusBar } from "./layout/status-bar";
import { PaneSplitter } from "./layout/pane-splitter";
import { SidePane } from "./layout/side-pane";
import { EditorArea } from "./layout/editor-area";
import { ChatSection, PreviewSection, TerminalSection } from "./layout/frame-panes";
import { FrameDialogs, type FrameDialogsHandle } from "./layout/frame-dialogs";
import styles from "./ide-frame.module.css";

export function IdeFrame({ sessionId }: { sessionId: string }) {
  const bus = useOwnIdeBus();
  const s = useSessionFrame(sessionId);
  const { readOnly, state, runner } = s;
  const can = useMemo(() => ({ preview: !readOnly }), [readOnly]);
  const layout = useIdeLayout(s.person, can);
  const ws = useWorkspace({ sessionId, state, runnerUp: !!runner, bus, show: layout.show });
  const dialogs = useRef<FrameDialogsHandle>(null);
  const { commands, toggle, terminalPane } = usePaneCommands({
    layout,
    bus,
    readOnly,
    keysReadOnly: s.keysReadOnly,
    running: s.running,
    active: ws.active,
    openQuick: (initial) => dialogs.current?.openQuick(initial),
    openReview: () => ws.openReview(),
    save: () => void (ws.active && ws.files.save(ws.active)),
    cancel: s.cancel,
    compact: s.compact,
    share: () => dialogs.current?.share(),
  });

  if (s.sessionError) {
    return (
      <main className={styles.missing}>
        <p>{s.sessionError.message}</p>
        {readOnly ? <a href="/share/leave">Forget this share link</a> : <Link href="/">Back to sessions</Link>}
      </main>
    );
  }

  const { linkEnded, socket, status, health } = s;
  const { fitted } = layout;
  const shown = fitted.shown;
  return (
    <FrameContext readOnly={readOnly} sandbox={s.sandboxStatus} bus={bus}>
      <div
        className={styles.frame}
        style={layout.style}
        data-testid="ide-frame"
        data-readonly={readOnly}
        data-collapsed={fitted.collapsed.join(" ")}
      >
        <TopBar
          sessionId={sessionId}
          title={s.title}
          kind={s.kind}
          running={s.running}
          shown={shown}
          onToggle={toggle}
          onShare={() => dialogs.current?.share()}
          state={state}
        />
        <FrameBanners
          ended={linkEnded}
          member={s.kind === "member"}
          error={s.streamError}
          socketClosed={socket === "closed"}
          socketDown={!linkEnded && (socket === "closed" || status === "retrying")}
          runnerDown={!linkEnded && health.data !== undefined && !runner}
          goneRunner={s.goneRunner}
        />
        <SidePane sessionId={sessionId} ws={ws} runnerUp={!!runner} hidden={!shown.side} />
        <PaneSplitter
          layout={layout}
          pane="side"
          label="Resize side bar"
          className={`${styles.splitX} ${styles.splitFiles}`}
          testId="split-files"
        />
        <EditorArea sessionId={sessionId} ws={ws} state={state} />
        <PaneSplitter
          layout={layout}
          pane="preview"
          label="Resize preview"
          className={`${styles.splitX} ${styles.splitPreview}`}
          testId="split-preview"
        />
        <PreviewSection sessionId={sessionId} shown={shown.preview} readOnly={readOnly} />
        <PaneSplitter
          layout={layout}
          pane="chat"
          label="Resize chat"
          className={`${styles.splitX} ${styles.splitChat}`}
          testId="split-chat"
        />
        <ChatSection
          sessionId={sessionId}
          state={state}
          ws={ws}
          shown={shown.chat}
          onSent={s.onSent}
          onLoadEarlier={s.loadEarlier}
        />
        <PaneSplitter
          layout={layout}
          pane="panel"
          label="Resize terminal"
          className={styles.splitY}
          testId="split-terminal"
        />
        <TerminalSection
          sessionId={sessionId}
          ws={ws}
          shown={shown.panel}
          readOnly={readOnly}
          viewer={s.kind === "viewer"}
          runnerUp={!!runner}
          paneRef={terminalPane}
        />
        <StatusBar
          sessionId={sessionId}
          socket={socket}
          status={status}
          error={s.streamError}
          viewer={s.viewer}
          lastSeq={state.lastSeq}
          runner={runner}
          runnerPending={health.isPending}
          database={health.data?.database.provider}
          problems={health.data?.problems}
          filesVersion={ws.filesVersion}
        />
        <FrameDialogs ref={dialogs} sessionId={sessionId} ws={ws} commands={commands} />
      </div>
    </FrameContext>
  );
}
