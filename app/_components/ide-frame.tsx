"use client";
// The IDE: side bar (files, search, changes) on the left, editor with tabs in the centre, the live
// preview beside the editor when open, chat on the right, the terminal in the bottom panel, a top
// bar and a status bar (layout/). This file wires the session's data to the panes; how the panes
// share the window is layout/use-ide-layout.ts, what keys, palette and toggles do is
// layout/use-pane-commands.ts, and commands reach a pane over the IDE bus (_lib/ide-bus.ts).
// The owner shares the session from here (Share); opened through a share link the IDE is
// read-only: no composer, approvals, terminal, preview or edits, and it says when the link ends.
import Link from "next/link";
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { useQuery } from "@tanstack/react-query";
import { closeEventSocket, useEventSocketState, useTRPC } from "../_lib/trpc";
import { ReadOnlyContext } from "../_lib/read-only";
import { SandboxStatusContext, type SandboxStatus } from "../_lib/sandbox-status";
import { IdeBusProvider, useOwnIdeBus } from "../_lib/ide-bus";
import { ShareDialog } from "./share/share-dialog";
import { isShareView } from "./share/share-view";
import { useSessionApi } from "../_lib/session-api";
import { useSessionEvents } from "../_lib/use-session-events";
import { pendingApprovals } from "../_lib/session-state";
import { useOpenFiles } from "../_lib/use-open-files";
import { Splitter } from "./splitter";
import { FileTree, type TreeCommand } from "./files/file-tree";
import { useTreeListing } from "./files/use-tree-listing";
import { changeMarks } from "./files/change-marks";
import { EditorPane } from "./editor/editor-pane";
import { QuickOpen } from "./editor/quick-open";
import { ChatPane } from "./chat/chat-pane";
import type { FileTarget } from "../_lib/tool-file";
import type { LinkTarget } from "../_lib/terminal-links";
import { PreviewPane, type PreviewRequest } from "./preview/preview-pane";
import { SearchPanel, type SearchHit } from "./search/search-panel";
import { SideBar, type SideView } from "./side-bar";
import { ChangesPanel, type ChangedFile } from "./changes/changes-panel";
import { ChangeDiff } from "./changes/change-diff";
import { AgentChanges, reviewTurns } from "./agent-changes/agent-changes";
import type { TerminalState } from "./terminal/xterm-view";
import { TerminalTabs } from "./terminal/terminal-tabs";
import { useIdeLayout, type Pane } from "./layout/use-ide-layout";
import { usePaneCommands } from "./layout/use-pane-commands";
import { TopBar } from "./layout/top-bar";
import { StatusBar } from "./layout/status-bar";
import { FrameBanners } from "./layout/frame-banners";
import { SessionSwitcher } from "./sessions/session-switcher";
import { CostTotal } from "./sessions/cost-total";
import { MIN } from "./layout/pane-layout";
import styles from "./ide-frame.module.css";

export function IdeFrame({ sessionId }: { sessionId: string }) {
  const trpc = useTRPC();
  const api = useSessionApi();
  const bus = useOwnIdeBus();
  const session = useQuery(trpc.sessions.get.queryOptions({ id: sessionId }, { retry: false }));
  const who = useQuery(trpc.auth.whoami.queryOptions(undefined, { staleTime: Infinity }));
  const readOnly = who.data?.kind !== "member";
  const [sharing, setSharing] = useState(false);
  const { state, status, error: streamError, loadEarlier } = useSessionEvents(sessionId);
  const linkEnded = status === "ended";
  // Refused for good (the share link ended): the socket would only knock on a closed door, and
  // the runner's health is no longer this page's business.
  useEffect(() => {
    if (linkEnded) closeEventSocket();
  }, [linkEnded]);
  const health = useQuery(trpc.health.get.queryOptions(undefined, { refetchInterval: linkEnded ? false : 2_000 }));
  // The runner this session's workspace is placed on (server/services/placement.ts); its facts
  // come from health, and when it is gone the banner names it and since when.
  const place = useQuery(
    trpc.projects.workspaceOf.queryOptions({ sessionId }, { refetchInterval: linkEnded ? false : 5_000, retry: false }),
  );
  const placedOn = place.data?.runner?.id;
  const runner = health.data?.runners.find((r) => r.connected && (!placedOn || r.id === placedOn));
  const sandboxed = runner?.sandboxed;
  const { reason: sandboxReason, network, networkReason } = runner?.sandbox ?? {};
  const sandboxStatus = useMemo<SandboxStatus | undefined>(
    () => (sandboxed === undefined ? undefined : { sandboxed, reason: sandboxReason, network, networkReason }),
    [sandboxed, sandboxReason, network, networkReason],
  );
  const socket = useEventSocketState();
  const files = useOpenFiles(sessionId);
  const tree = useTreeListing(sessionId, !!runner);
  // The Changes tab's badge and the tree's marks: the panel's own query (one request, shared
  // through the cache).
  const changesQuery = useQuery(trpc.files.changes.queryOptions({ sessionId }, { retry: 1, enabled: !!runner }));
  const uncommitted = changesQuery.data?.files;
  const changeCount = uncommitted?.length;
  const marks = useMemo(() => changeMarks(uncommitted), [uncommitted]);
  const person = who.data ? (who.data.kind === "member" ? who.data.userId : who.data.kind) : undefined;
  const can = useMemo(() => ({ preview: !readOnly }), [readOnly]);
  const layout = useIdeLayout(person, can);
  const { fitted } = layout;
  // Every pane's handle is the same control, told which pane it sizes (the side bar grows rightwards).
  const paneSplitter = (pane: Pane, label: string, className: string, testId: string) => (
    <Splitter
      axis={pane === "panel" ? "y" : "x"}
      size={fitted[pane]}
      direction={pane === "side" ? 1 : -1}
      min={MIN[pane]}
      max={layout.maxOf(pane)}
      label={label}
      className={className}
      onResize={(n) => layout.resize(pane, n)}
      testId={testId}
    />
  );
  // The quick-open box and what it starts with ("" files, ">" commands, ":" a line); null: closed.
  const [quick, setQuick] = useState<string | null>(null);
  const [termState, setTermState] = useState<TerminalState>("connecting");
  const termPane = useRef<HTMLElement>(null);
  const [side, setSide] = useState<{ view: SideView } | null>(null);
  const [treeCommand, setTreeCommand] = useState<TreeCommand | null>(null);
  // The diff shown follows the workspace: the file's entry in the current changes (its kind of
  // change may differ since it was opened), closed once the file has no change left (a commit,
  // a discard, an edit back to the original).
  const [diffPath, setDiffPath] = useState<string | null>(null);
  const diff = (diffPath && uncommitted?.find((f) => f.path === diffPath)) || null;
  // "Changes by the agent" in the editor area: one turn's, or the session's (no turnId).
  const [review, setReview] = useState<{ turnId?: string } | null>(null);
  const setDiff = useCallback((f: ChangedFile | null) => (setReview(null), setDiffPath(f?.path ?? null)), []);
  useEffect(() => {
    if (diffPath && uncommitted && !uncommitted.some((f) => f.path === diffPath)) setDiffPath(null);
  }, [diffPath, uncommitted]);
  const [reveal, setReveal] = useState<SearchHit | null>(null);
  const openHit = useCallback(
    (hit: SearchHit) => {
      setDiffPath(null);
      files.open(hit.path);
      setReveal({ ...hit });
    },
    [files],
  );
  // Opening a file (or switching tabs) leaves a change's diff for the editor.
  const openFile = useCallback((path: string) => (setDiffPath(null), setReview(null), files.open(path)), [files]);
  const active = files.tabs.active;
  useEffect(() => (setDiffPath(null), setReview(null)), [active]);
  const openReview = useCallback((turnId?: string) => (setDiffPath(null), setReview({ turnId })), []);

  // The agent (or anything) changed files: refresh the tree and any open file it touched.
  const filesVersion = state.files?.version;
  const { changed } = files;
  const { refresh } = tree;
  useEffect(() => {
    if (filesVersion === undefined || !state.files) return;
    void refresh();
    changed(state.files.paths);
    // The Changes panel refetches when it is shown; an open diff needs it either way.
    if (diffPath) void changesQuery.refetch();
    // state.files changes exactly when the version does
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [filesVersion, refresh, changed]);

  const { entries } = tree;
  const filePaths = useMemo(() => entries?.filter((e) => e.type === "file").map((e) => e.path), [entries]);
  const fileSet = useMemo(() => new Set(filePaths), [filePaths]);
  const isFile = useCallback((p: string) => fileSet.has(p), [fileSet]);
  const [previewRequest, setPreviewRequest] = useState<PreviewRequest | null>(null);
  const showLayout = layout.show;
  const onTerminalLink = useCallback(
    (t: LinkTarget) => {
      if (t.kind === "file")
        return t.line ? openHit({ path: t.path, line: t.line, column: t.column }) : openFile(t.path);
      if (!t.preview) return void window.open(t.url, "_blank", "noopener,noreferrer");
      setPreviewRequest({ ...t.preview });
      showLayout("preview");
    },
    [openHit, openFile, showLayout],
  );
  const openToolFile = useCallback(
    (t: FileTarget) => (t.line ? openHit({ path: t.path, line: t.line }) : openFile(t.path)),
    [openHit, openFile],
  );

  // The runner coming or going reaches the session as an event at once; health (polled every
  // 2 s, and the truth after a server restart) is asked again right then, so the banner does
  // not wait for the next poll.
  const runnerEvent = state.runner;
  const refetchHealth = health.refetch;
  const refetchPlace = place.refetch;
  useEffect(() => {
    if (runnerEvent) void refetchHealth().then(() => refetchPlace());
  }, [runnerEvent, refetchHealth, refetchPlace]);

  const running = state.activeTurnId !== null;
  // The browser tab says when the agent waits for the person (an approval) or is working, so a
  // person in another tab sees it; and which session this is.
  const waiting = pendingApprovals(state).length;
  const title = session.data?.title;
  useEffect(() => {
    const mark = waiting > 0 ? `(${waiting}) ` : running ? "● " : "";
    document.title = `${mark}${title ?? "Session"} · Quiver`;
  }, [waiting, running, title]);
  useEffect(() => () => void (document.title = "Quiver"), []);
  // A new session is named by its first message (services/sessions): read the title again once sent.
  const refetchSession = session.refetch;
  const onSent = useCallback(() => void refetchSession(), [refetchSession]);
  const cancel = useCallback(() => void api.cancel(sessionId).catch(() => {}), [api, sessionId]);

  const { commands } = usePaneCommands({
    layout,
    bus,
    readOnly,
    // Until the server says who this is, the keys act unless the page is a share view: a member's
    // first keys after a load must not be lost (the server still decides what anyone may do).
    keysReadOnly: who.data ? readOnly : isShareView(),
    running,
    fileOpen: active !== null,
    showSide: (view) => setSide({ view }),
    openQuick: setQuick,
    openReview: () => openReview(),
    save: () => void (active && files.save(active)),
    cancel,
    compact: () => void api.send(sessionId, "/compact").catch(() => {}),
    share: () => setSharing(true),
    treeCommand: (kind) => (layout.show("side"), setSide({ view: "files" }), setTreeCommand({ kind, at: active })),
    terminalPane: termPane,
  });
  const goToLine = useCallback((line: number) => active && openHit({ path: active, line }), [active, openHit]);

  if (session.error) {
    return (
      <main className={styles.missing}>
        <p>{session.error.message}</p>
        {readOnly ? <a href="/share/leave">Forget this share link</a> : <Link href="/">Back to sessions</Link>}
      </main>
    );
  }

  const socketDown = !linkEnded && (socket === "closed" || status === "retrying");
  const runnerDown = !linkEnded && health.data !== undefined && !runner;
  const goneRunner = place.data?.runner && !place.data.runner.connected ? place.data.runner : undefined;
  const shown = fitted.shown;

  return (
    <ReadOnlyContext.Provider value={readOnly}>
      <SandboxStatusContext.Provider value={sandboxStatus}>
        <IdeBusProvider value={bus}>
          <div
            className={styles.frame}
            style={layout.style}
            data-testid="ide-frame"
            data-readonly={readOnly}
            data-collapsed={fitted.collapsed.join(" ")}
          >
            <TopBar
              sessionId={sessionId}
              title={session.data?.title}
              kind={who.data?.kind}
              running={running}
              shown={shown}
              onToggle={(pane) => (
                pane === "preview" && !shown.preview && bus.send("preview.focus"),
                layout.toggle(pane)
              )}
              onShare={() => setSharing(true)}
              nav={!readOnly && <SessionSwitcher sessionId={sessionId} />}
              meters={!readOnly && <CostTotal sessionId={sessionId} state={state} />}
            />
            <FrameBanners
              ended={linkEnded}
              member={who.data?.kind === "member"}
              error={streamError}
              socketClosed={socket === "closed"}
              socketDown={socketDown}
              runnerDown={runnerDown}
              goneRunner={goneRunner}
            />
            <nav className={styles.files} aria-label="Files" data-testid="pane-files" hidden={!shown.side}>
              <SideBar
                show={side}
                changeCount={changeCount}
                changes={
                  <ChangesPanel
                    sessionId={sessionId}
                    version={filesVersion}
                    enabled={!!runner}
                    selected={diff?.path ?? null}
                    onOpen={setDiff}
                    onAgentChanges={() => openReview()}
                  />
                }
                search={<SearchPanel sessionId={sessionId} onOpen={openHit} />}
                explorer={
                  <FileTree
                    sessionId={sessionId}
                    entries={entries ?? []}
                    cut={tree.cut}
                    onFoldersOpen={tree.partial ? tree.opening : undefined}
                    command={treeCommand}
                    loading={tree.isPending}
                    error={tree.error?.message}
                    activePath={active}
                    onOpen={openFile}
                    onCreated={(path) => openHit({ path, line: 1 })}
                    onRenamed={files.rename}
                    onDeleted={(p) => files.changed([p])}
                    changes={marks}
                  />
                }
              />
            </nav>
            {shown.side &&
              paneSplitter("side", "Resize side bar", `${styles.splitX} ${styles.splitFiles}`, "split-files")}
            <section className={styles.editor} aria-label="Editor" data-testid="pane-editor">
              {/* Kept mounted under a change's diff: a new Monaco instance costs far more than showing this one again. */}
              <div className={styles.editorHost} hidden={!!diff || !!review}>
                <EditorPane sessionId={sessionId} files={files} workspace={filePaths} reveal={reveal} />
              </div>
              {review && !diff && (
                <AgentChanges
                  sessionId={sessionId}
                  turnId={review.turnId}
                  turns={reviewTurns(state)}
                  version={`${state.checkpoints.version}:${filesVersion ?? 0}`}
                  onScope={openReview}
                  onOpenFile={openFile}
                  onReverted={(p) => files.changed([p])}
                  onClose={() => setReview(null)}
                />
              )}
              {diff && (
                <ChangeDiff
                  sessionId={sessionId}
                  file={diff}
                  version={changesQuery.dataUpdatedAt}
                  onOpenFile={openFile}
                  onClose={() => setDiff(null)}
                />
              )}
            </section>
            {shown.preview &&
              paneSplitter("preview", "Resize preview", `${styles.splitX} ${styles.splitPreview}`, "split-preview")}
            <section className={styles.preview} aria-label="Preview" data-testid="pane-preview" hidden={!shown.preview}>
              {shown.preview && !readOnly && (
                <PreviewPane sessionId={sessionId} visible={shown.preview} request={previewRequest} />
              )}
            </section>
            {shown.chat && paneSplitter("chat", "Resize chat", `${styles.splitX} ${styles.splitChat}`, "split-chat")}
            {/* Hidden, not unmounted: a draft message, attachments and scroll position survive. */}
            <aside className={styles.chat} aria-label="Chat" data-testid="pane-chat" hidden={!shown.chat}>
              <ChatPane
                sessionId={sessionId}
                state={state}
                onSent={onSent}
                onOpenFile={openToolFile}
                knownPaths={filePaths}
                onLoadEarlier={loadEarlier}
                onReview={openReview}
              />
            </aside>
            {shown.panel && paneSplitter("panel", "Resize terminal", styles.splitY, "split-terminal")}
            <section
              ref={termPane}
              className={styles.terminal}
              aria-label="Terminal"
              data-testid="pane-terminal"
              data-state={termState}
              hidden={!shown.panel}
            >
              {readOnly ? (
                <div className={styles.empty}>{who.data?.kind === "viewer" ? "The terminal is not shared." : ""}</div>
              ) : runner ? (
                <TerminalTabs sessionId={sessionId} onState={setTermState} isFile={isFile} onLink={onTerminalLink} />
              ) : (
                <div className={styles.empty}>Waiting for the runner…</div>
              )}
            </section>
            <StatusBar
              sessionId={sessionId}
              socket={socket}
              status={status}
              error={streamError}
              viewer={who.data?.kind === "viewer" || (!who.data && isShareView())}
              lastSeq={state.lastSeq}
              runner={runner}
              runnerPending={health.isPending}
              database={health.data?.database.provider}
              problems={health.data?.problems}
              filesVersion={filesVersion}
            />
            {quick !== null && (
              <QuickOpen
                paths={filePaths ?? []}
                recent={files.recent}
                active={active}
                findIn={tree.partial ? sessionId : undefined}
                commands={commands}
                initial={quick}
                onOpen={openFile}
                onGoToLine={active ? goToLine : undefined}
                onClose={() => setQuick(null)}
              />
            )}
            {sharing && <ShareDialog sessionId={sessionId} onClose={() => setSharing(false)} />}
          </div>
        </IdeBusProvider>
      </SandboxStatusContext.Provider>
    </ReadOnlyContext.Provider>
  );
}
