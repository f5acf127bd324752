"use client";
// The session's workspace as the panes share it: the open files and the tree, the uncommitted
// changes (the Changes tab's badge, the tree's marks, a change's diff), and what the editor area
// shows: the open file (revealed at a line), one change's diff, or the agent's changes. The side
// bar, the chat, the terminal and quick open all open things here, so it lives above them.
import { useCallback, useEffect, useMemo, useState } from "react";
import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "../../_lib/trpc";
import type { IdeBus } from "../../_lib/ide-bus";
import type { SessionState } from "../../_lib/session-state";
import { useOpenFiles } from "../../_lib/use-open-files";
import type { FileTarget } from "../../_lib/tool-file";
import type { LinkTarget } from "../../_lib/terminal-links";
import { useTreeListing } from "../files/use-tree-listing";
import { changeMarks } from "../files/change-marks";
import type { SearchHit } from "../search/search-panel";
import type { ChangedFile } from "../changes/changes-panel";
import type { Pane } from "./use-ide-layout";

interface Deps {
  sessionId: string;
  state: SessionState;
  /** The workspace's runner is connected: the tree and the changes can be read. */
  runnerUp: boolean;
  bus: IdeBus;
  show(pane: Pane): void;
}

export function useWorkspace({ sessionId, state, runnerUp, bus, show }: Deps) {
  const trpc = useTRPC();
  const files = useOpenFiles(sessionId);
  const tree = useTreeListing(sessionId, runnerUp);
  // The Changes tab's badge and the tree's marks: the panel's own query (one request, shared
  // through the cache).
  const changesQuery = useQuery(trpc.files.changes.queryOptions({ sessionId }, { retry: 1, enabled: runnerUp }));
  const uncommitted = changesQuery.data?.files;
  const marks = useMemo(() => changeMarks(uncommitted), [uncommitted]);
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
  const closeReview = useCallback(() => setReview(null), []);

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
  const onTerminalLink = useCallback(
    (t: LinkTarget) => {
      if (t.kind === "file")
        return t.line ? openHit({ path: t.path, line: t.line, column: t.column }) : openFile(t.path);
      if (!t.preview) return void window.open(t.url, "_blank", "noopener,noreferrer");
      bus.send("preview.open", { ...t.preview });
      show("preview");
    },
    [openHit, openFile, bus, show],
  );
  const openToolFile = useCallback(
    (t: FileTarget) => (t.line ? openHit({ path: t.path, line: t.line }) : openFile(t.path)),
    [openHit, openFile],
  );
  const goToLine = useCallback((line: number) => active && openHit({ path: active, line }), [active, openHit]);

  return {
    files,
    tree,
    active,
    filePaths,
    isFile,
    filesVersion,
    /** When the changes were last read (a diff reads its file again then). */
    changesReadAt: changesQuery.dataUpdatedAt,
    changeCount: uncommitted?.length,
    marks,
    diff,
    setDiff,
    review,
    openReview,
    closeReview,
    reveal,
    openHit,
    openFile,
    openToolFile,
    goToLine,
    onTerminalLink,
  };
}

export type Workspace = ReturnType<typeof useWorkspace>;
