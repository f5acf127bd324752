"use client";
// The IDE: file tree (left), editor with tabs (centre), the live preview beside the editor when
// open, chat (right), terminal (below the editor), a status bar, and a banner when the event
// socket or the runner is down. Pane sizes and the terminal's and preview's visibility are
// remembered per session; VS Code's keys work everywhere (ide-keys.ts).
// The owner shares the session from here (Share); opened through a share link the IDE is
// read-only: no composer, approvals, terminal, preview or edits, and it says when the link ends.
import Link from "next/link";
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { useQuery } from "@tanstack/react-query";
import { closeEventSocket, useEventSocketState, useTRPC } from "../_lib/trpc";
import { ReadOnlyContext } from "../_lib/read-only";
import { SandboxStatusContext, type SandboxStatus } from "../_lib/sandbox-status";
import { SandboxBanner } from "./sandbox-banner";
import { WorkspaceUsage } from "./workspace-usage";
import { ShareDialog } from "./share/share-dialog";
import { isShareView } from "./share/share-view";
import { useSessionApi } from "../_lib/session-api";
import { usePersisted } from "../_lib/persisted";
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
import { SessionTitle } from "./session-title";
import { OrgSwitcher } from "./org-switcher";
import { SideBar, type SideView } from "./side-bar";
import { ChangesPanel, type ChangedFile } from "./changes/changes-panel";
import { ChangeDiff } from "./changes/change-diff";
import { AgentChanges, reviewTurns } from "./agent-changes/agent-changes";
import type { TerminalState } from "./terminal/xterm-view";
import { TerminalTabs } from "./terminal/terminal-tabs";
import { useIdeKeys } from "./ide-keys";
import { focusPendingApproval } from "./chat/approval-notice";
import { ideCommands } from "./ide-commands";
import styles from "./ide-frame.module.css";

interface Layout {
  files: number;
  chat: number;
  term: number;
  termOpen: boolean;
  /** Absent in layouts stored before the preview existed: the defaults fill them in. */
  preview?: number;
  previewOpen?: boolean;
}
const DEFAULT_LAYOUT: Required<Layout> = { files: 240, chat: 400, term: 220, termOpen: true, preview: 480, previewOpen: false };
const isLayout = (v: unknown): v is Layout =>
  !!v && typeof v === "object" && ["files", "chat", "term"].every((k) => typeof (v as Record<string, unknown>)[k] === "number");

export function IdeFrame({ sessionId }: { sessionId: string }) {
  const trpc = useTRPC();
  const api = useSessionApi();
  const session = useQuery(trpc.sessions.get.queryOptions({ id: sessionId }, { retry: false }));
  const who = useQuery(trpc.auth.whoami.queryOptions(undefined, { staleTime: Infinity }));
  const readOnly = who.data?.kind !== "member";
  const [sharing, setSharing] = useState(false);
  const health = useQuery(trpc.health.get.queryOptions(undefined, { refetchInterval: 2_000 }));
  // The runner this session's workspace is placed on (server/services/placement.ts); its facts
  // come from health, and when it is gone the banner names it and since when.
  const place = useQuery(trpc.projects.workspaceOf.queryOptions({ sessionId }, { refetchInterval: 5_000, retry: false }));
  const placedOn = place.data?.runner?.id;
  const runner = health.data?.runners.find((r) => r.connected && (!placedOn || r.id === placedOn));
  const sandboxed = runner?.sandboxed;
  const { reason: sandboxReason, network, networkReason } = runner?.sandbox ?? {};
  const sandboxStatus = useMemo<SandboxStatus | undefined>(
    () => (sandboxed === undefined ? undefined : { sandboxed, reason: sandboxReason, network, networkReason }),
    [sandboxed, sandboxReason, network, networkReason],
  );
  const socket = useEventSocketState();
  const { state, status, error: streamError, loadEarlier } = useSessionEvents(sessionId);
  const linkEnded = status === "ended";
  // Refused for good (the share link ended): the socket would only knock on a closed door.
  useEffect(() => {
    if (linkEnded) closeEventSocket();
  }, [linkEnded]);
  const files = useOpenFiles(sessionId);
  const tree = useTreeListing(sessionId, !!runner);
  // The Changes tab's badge and the tree's marks: the panel's own query (one request, shared
  // through the cache).
  const changesQuery = useQuery(trpc.files.changes.queryOptions({ sessionId }, { retry: 1, enabled: !!runner }));
  const uncommitted = changesQuery.data?.files;
  const changeCount = uncommitted?.length;
  const marks = useMemo(() => changeMarks(uncommitted), [uncommitted]);
  const [stored, setLayout] = usePersisted<Layout>(`quiver.layout.${sessionId}`, DEFAULT_LAYOUT, isLayout);
  const layout = { ...DEFAULT_LAYOUT, ...stored };
  const [previewFocus, setPreviewFocus] = useState(0);
  // The quick-open box and what it starts with ("" files, ">" commands, ":" a line); null: closed.
  const [quick, setQuick] = useState<string | null>(null);
  const [modelSignal, setModelSignal] = useState(0);
  const [termState, setTermState] = useState<TerminalState>("connecting");
  const [termFocus, setTermFocus] = useState(0);
  const termPane = useRef<HTMLElement>(null);
  const focusBeforeTerm = useRef<Element | null>(null);
  const [termNew, setTermNew] = useState(0);
  const [side, setSide] = useState<{ view: SideView } | null>(null);
  const [treeCommand, setTreeCommand] = useState<TreeCommand | null>(null);
  const [replaceSignal, setReplaceSignal] = useState(0);
  const onTree = (kind: TreeCommand["kind"]) => (setSide({ view: "files" }), setTreeCommand({ kind, at: active }));
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
  const openHit = useCallback((hit: SearchHit) => {
    setDiffPath(null);
    files.open(hit.path);
    setReveal({ ...hit });
  }, [files]);
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
  const onTerminalLink = useCallback(
    (t: LinkTarget) => {
      if (t.kind === "file") return t.line ? openHit({ path: t.path, line: t.line, column: t.column }) : openFile(t.path);
      if (!t.preview) return void window.open(t.url, "_blank", "noopener,noreferrer");
      setPreviewRequest({ ...t.preview });
      setLayout((l) => ({ ...l, previewOpen: true }));
    },
    [openHit, openFile, setLayout],
  );
  const openToolFile = useCallback((t: FileTarget) => (t.line ? openHit({ path: t.path, line: t.line }) : openFile(t.path)), [openHit, openFile]);

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

  const keyActions = {
    search: () => setSide({ view: "search" }),
    replace: () => (setSide({ view: "search" }), setReplaceSignal((n) => n + 1)),
    explorer: () => setSide({ view: "files" }),
    changes: () => setSide({ view: "changes" }),
    agentChanges: () => openReview(),
    quickOpen: () => setQuick(""),
    commandPalette: () => setQuick(">"),
    togglePreview: () => (setLayout((l) => ({ ...l, previewOpen: !(l.previewOpen ?? false) })), setPreviewFocus((n) => n + 1)),
    toggleTerminal: () => {
      // As in VS Code: Ctrl+` hides only the terminal being typed in (focus goes back where it
      // was); an open terminal without focus is focused, not hidden.
      const typingInIt = !!termPane.current?.contains(document.activeElement);
      if (layout.termOpen && typingInIt) {
        setLayout((l) => ({ ...l, termOpen: false }));
        const back = focusBeforeTerm.current;
        if (back instanceof HTMLElement && back.isConnected) back.focus();
        return;
      }
      if (!typingInIt) focusBeforeTerm.current = document.activeElement;
      setLayout((l) => ({ ...l, termOpen: true }));
      setTermFocus((n) => n + 1);
    },
    newTerminal: () => (setLayout((l) => ({ ...l, termOpen: true })), setTermNew((n) => n + 1)),
    save: () => void (active && files.save(active)),
    approval: focusPendingApproval,
    escape: () => running && cancel(),
  } as const;
  // Until the server says who this is, the keys act unless the page is a share view: a member's
  // first keys after a load must not be lost (the server still decides what anyone may do).
  useIdeKeys(keyActions, who.data ? readOnly : isShareView());
  const commands = ideCommands(
    {
      ...keyActions,
      goToLine: () => setQuick(":"),
      stop: cancel,
      compact: () => void api.send(sessionId, "/compact").catch(() => {}),
      chooseModel: () => setModelSignal((n) => n + 1),
      share: () => setSharing(true),
      newFile: () => onTree("file"),
      newFolder: () => onTree("dir"),
      renameFile: () => onTree("rename"),
      deleteFile: () => onTree("delete"),
      home: () => window.location.assign("/"),
    },
    { readOnly, fileOpen: active !== null, running },
  );
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
  // The subscription stays registered while the socket is down (it resumes by itself), so
  // its own status would still read "live".
  const eventsState = socket === "closed" ? "retrying" : status;
  const runnerDown = health.data !== undefined && !runner;
  const frameStyle = {
    "--files-w": `${layout.files}px`,
    "--chat-w": `${layout.chat}px`,
    "--term-h": layout.termOpen ? `${layout.term}px` : "0px",
    "--preview-w": layout.previewOpen ? `${layout.preview}px` : "0px",
    "--psplit-w": layout.previewOpen ? "4px" : "0px",
  } as React.CSSProperties;

  return (
    <ReadOnlyContext.Provider value={readOnly}>
    <SandboxStatusContext.Provider value={sandboxStatus}>
    <div className={styles.frame} style={frameStyle} data-testid="ide-frame" data-readonly={readOnly}>
      <header className={styles.top}>
        <Link href="/" className={styles.brand}>Quiver</Link>
        <SessionTitle sessionId={sessionId} title={session.data?.title} editable={!readOnly} />
        {running && <span className={styles.working}>{readOnly ? "Agent working…" : <>Agent working… <kbd>Esc</kbd> stops</>}</span>}
        {who.data?.kind === "viewer" && <span className={styles.shared} data-testid="readonly-banner">Shared read-only</span>}
        {who.data?.kind === "member" && <OrgSwitcher />}
        {who.data?.kind === "member" && (
          <button type="button" className={styles.toggle} onClick={() => setSharing(true)} data-testid="share-open">Share</button>
        )}
        {!readOnly && <button type="button" className={styles.toggle} aria-pressed={layout.previewOpen} aria-keyshortcuts="Control+Alt+P" title="Live preview (Ctrl+Alt+P)" onClick={() => setLayout((l) => ({ ...l, previewOpen: !(l.previewOpen ?? false) }))} data-testid="toggle-preview">
          Preview
        </button>}
      </header>
      {linkEnded && who.data?.kind !== "member" && (
        <div className={styles.banner} role="alert" data-testid="link-ended">
          {streamError ?? "This share link has ended."} <a href="/share/leave">Forget this link</a>
        </div>
      )}
      {linkEnded && who.data?.kind === "member" && (
        <div className={styles.banner} role="alert" data-testid="access-ended">
          This session is not open to you: it was deleted, it is another member&apos;s, or you are no longer in its org. <a href="/">Back to your sessions</a>
        </div>
      )}
      {!linkEnded && (socketDown || runnerDown) && (
        <div className={styles.banner} role="status" data-testid="connection-banner">
          {socket === "closed"
            ? "Connection to the server lost. Reconnecting… (events resume where they stopped)"
            : socketDown
              ? `Live updates interrupted (${streamError ?? "unknown error"}). Retrying…`
              : place.data?.runner && !place.data.runner.connected
                ? <span data-testid="workspace-runner-gone">This session&apos;s workspace is on runner {place.data.runner.id}, gone since {place.data.runner.since ? new Date(place.data.runner.since).toLocaleString() : "an unknown time"}: files, terminal and tools are unavailable until it reconnects. The history stays readable.</span>
                : "The runner is disconnected: files, terminal and tools are unavailable until it reconnects."}
        </div>
      )}
      {!linkEnded && !socketDown && !runnerDown && <SandboxBanner />}
      <nav className={styles.files} aria-label="Files" data-testid="pane-files">
        <SideBar
          show={side}
          changeCount={changeCount}
          changes={<ChangesPanel sessionId={sessionId} version={filesVersion} enabled={!!runner} selected={diff?.path ?? null} onOpen={setDiff} onAgentChanges={() => openReview()} />}
          search={(focusSignal) => <SearchPanel sessionId={sessionId} focusSignal={focusSignal} replaceSignal={replaceSignal} onOpen={openHit} />}
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
      <Splitter axis="x" size={layout.files} direction={1} min={140} max={600} label="Resize files" className={styles.splitX} onResize={(files) => setLayout((l) => ({ ...l, files }))} testId="split-files" />
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
        {diff && <ChangeDiff sessionId={sessionId} file={diff} version={changesQuery.dataUpdatedAt} onOpenFile={openFile} onClose={() => setDiff(null)} />}
      </section>
      {layout.previewOpen && (
        <Splitter axis="x" size={layout.preview} direction={-1} min={240} max={1400} label="Resize preview" className={`${styles.splitX} ${styles.splitPreview}`} onResize={(preview) => setLayout((l) => ({ ...l, preview }))} testId="split-preview" />
      )}
      <section className={styles.preview} aria-label="Preview" data-testid="pane-preview" hidden={!layout.previewOpen}>
        {layout.previewOpen && !readOnly && <PreviewPane sessionId={sessionId} visible={layout.previewOpen} focusSignal={previewFocus} request={previewRequest} />}
      </section>
      <Splitter axis="x" size={layout.chat} direction={-1} min={260} max={900} label="Resize chat" className={`${styles.splitX} ${styles.splitChat}`} onResize={(chat) => setLayout((l) => ({ ...l, chat }))} testId="split-chat" />
      <aside className={styles.chat} aria-label="Chat" data-testid="pane-chat">
        <ChatPane sessionId={sessionId} state={state} onSent={onSent} onOpenFile={openToolFile} knownPaths={filePaths} modelSignal={modelSignal} onLoadEarlier={loadEarlier} onReview={openReview} />
      </aside>
      {layout.termOpen && (
        <Splitter axis="y" size={layout.term} direction={-1} min={80} max={800} label="Resize terminal" className={styles.splitY} onResize={(term) => setLayout((l) => ({ ...l, term }))} testId="split-terminal" />
      )}
      <section ref={termPane} className={styles.terminal} aria-label="Terminal" data-testid="pane-terminal" data-state={termState} hidden={!layout.termOpen}>
        {readOnly ? <div className={styles.empty}>{who.data?.kind === "viewer" ? "The terminal is not shared." : ""}</div> : runner ? <TerminalTabs sessionId={sessionId} onState={setTermState} focusSignal={termFocus} newSignal={termNew} isFile={isFile} onLink={onTerminalLink} /> : <div className={styles.empty}>Waiting for the runner…</div>}
      </section>
      <footer className={styles.status}>
        <span data-testid="runner-state" data-state={runner ? "connected" : health.isPending ? "unknown" : "disconnected"}>
          <span className={runner ? styles.dotOk : styles.dotBad} />
          {runner ? `Runner connected${runner.sandboxed ? "" : " (unsandboxed)"}` : health.isPending ? "Checking runner…" : "Runner disconnected"}
        </span>
        <span className="muted" data-testid="events-state" data-state={eventsState}>
          {eventsState === "live" ? `events live · seq ${state.lastSeq}` : eventsState === "connecting" ? "connecting…" : "reconnecting…"}
          {health.data ? ` · database: ${health.data.database.provider}` : ""}
        </span>
        {runner && <WorkspaceUsage sessionId={sessionId} version={filesVersion} />}
        {/* A database that takes no writes, a data folder nearly full: the server's health says why. */}
        {health.data && health.data.problems.length > 0 && (
          <span role="alert" data-testid="health-problems">
            <span className={styles.dotBad} />
            {health.data.problems.join(" · ")}
          </span>
        )}
      </footer>
      {quick !== null && (
        <QuickOpen paths={filePaths ?? []} recent={files.recent} active={active} findIn={tree.partial ? sessionId : undefined} commands={commands} initial={quick} onOpen={openFile} onGoToLine={active ? goToLine : undefined} onClose={() => setQuick(null)} />
      )}
      {sharing && <ShareDialog sessionId={sessionId} onClose={() => setSharing(false)} />}
    </div>
    </SandboxStatusContext.Provider>
    </ReadOnlyContext.Provider>
  );
}
