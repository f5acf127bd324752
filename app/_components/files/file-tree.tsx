"use client";
// The workspace tree from the runner, refreshed whenever the session reports changed files.
// New file/folder (in the selected folder) and rename happen in a name box inside the tree
// (tree-name-box.tsx), delete after confirmation; all go through the runner, and a refusal is
// shown where it happened with nothing lost. Right click (or Shift+F10) opens the row's menu
// (which also downloads a file, and uploads files, as dropping them on the tree does: upload.ts).
// Read-only: browsing and copying paths only. The tree takes the keyboard when focused
// (tree-model.ts) and keeps the selected row in view. Uncommitted changes are marked on their
// rows and on the folders above them (change-marks.ts).
import { useCallback, useEffect, useMemo, useRef, useState, type KeyboardEvent, type MouseEvent } from "react";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useTRPC } from "../../_lib/trpc";
import { useReadOnly } from "../../_lib/read-only";
import { markedName, VisibleText } from "../../_lib/visible-text";
import { useIdeCommand } from "../../_lib/ide-bus";
import type { TreeEntry } from "../../../server/protocol/ide-types";
import { FILE_LIMITS } from "../../../server/protocol/file-ops";
import styles from "./files.module.css";
import { ancestors, buildTree, treeKey, visibleRows, type TreeNode } from "./tree-model";
import { lookup, type TreeEdit } from "./tree-edit";
import { TreeNameBox } from "./tree-name-box";
import { TreeMenu, type MenuItem } from "./tree-menu";
import { folderFor, useTreeDrop, useUpload } from "./upload";
import { MARK_LETTER, NO_MARKS, type ChangeMarks } from "./change-marks";

interface Props {
  sessionId: string;
  entries: TreeEntry[];
  /** Folders ("" the root) with more entries than one listing holds: only the first are shown. */
  cut: string[];
  /** Told which folders are shown open, when the listing may lack what is in them (use-tree-listing.ts). */
  onFoldersOpen?(paths: readonly string[]): void;
  loading: boolean;
  error?: string;
  activePath: string | null;
  onOpen(path: string): void;
  /** A new file made here: opened with the cursor in it (default: onOpen). */
  onCreated?(path: string): void;
  onRenamed(from: string, to: string): void;
  onDeleted(path: string): void;
  /** Uncommitted changes to mark (the Changes tab's list). */
  changes?: ChangeMarks;
}

type Selected = { path: string; type: TreeEntry["type"] };

/** From the command palette, as the IDE bus's "tree.command": a name box for a new file or folder
 *  (in the folder of `at`), or rename / delete `at`. */
export interface TreeCommand {
  kind: "file" | "dir" | "rename" | "delete";
  /** The file open in the editor. */
  at: string | null;
}

export function FileTree({
  sessionId,
  entries,
  cut,
  onFoldersOpen,
  loading,
  error,
  activePath,
  onOpen,
  onCreated = onOpen,
  onRenamed,
  onDeleted,
  changes = NO_MARKS,
}: Props) {
  const trpc = useTRPC();
  const readOnly = useReadOnly();
  const [expanded, setExpanded] = useState<Set<string>>(new Set());
  const [selected, setSelected] = useState<Selected | null>(null);
  const [edit, setEdit] = useState<TreeEdit | null>(null);
  const [menu, setMenu] = useState<{ x: number; y: number; row: Selected | null } | null>(null);
  const [opError, setOpError] = useState<string>();
  const tree = useMemo(() => buildTree(entries), [entries]);
  const uploads = useUpload(sessionId, setOpError, (paths) => {
    const last = paths.at(-1)!;
    setExpanded((s) => new Set([...s, ...paths.flatMap(ancestors)]));
    setSelected({ path: last, type: "file" });
  });
  const drop = useTreeDrop(!readOnly, (folder, files) => void uploads.upload(folder, files));
  const exists = useMemo(() => lookup(entries), [entries]);
  const queryClient = useQueryClient();
  // The change event refreshes the tree too; this makes the person's own action show at once.
  const onSettled = () => queryClient.invalidateQueries({ queryKey: trpc.files.tree.queryKey({ sessionId }) });
  // Create and rename report in their name box (the promise rejects); delete in the pane.
  const create = useMutation(trpc.files.create.mutationOptions({ onSettled }));
  const rename = useMutation(trpc.files.rename.mutationOptions({ onSettled }));
  const remove = useMutation(
    trpc.files.remove.mutationOptions({ onError: (err) => setOpError(err.message), onSettled }),
  );
  const treeRef = useRef<HTMLUListElement>(null);

  const folderOf = (row: Selected | null) =>
    row ? (row.type === "dir" ? row.path : row.path.split("/").slice(0, -1).join("/")) : "";
  const startNew = (type: "file" | "dir", at: Selected | null = selected) => {
    const parent = folderOf(at);
    if (parent) setExpanded((s) => new Set([...s, ...ancestors(parent), parent]));
    setOpError(undefined);
    setEdit({ kind: "new", type, parent });
  };
  const startRename = (row: Selected | null = selected) => {
    if (!row) return;
    setOpError(undefined);
    setEdit({ kind: "rename", path: row.path, type: row.type });
  };
  /** `focusTree`: false when the editor takes the keyboard next (a new file opens in it). */
  const endEdit = (focusTree = true) => {
    setEdit(null);
    if (focusTree) treeRef.current?.focus();
  };
  const submitEdit = async (path: string) => {
    if (!edit) return;
    if (edit.kind === "new") {
      await create.mutateAsync({ sessionId, path, kind: edit.type });
      setSelected({ path, type: edit.type });
      if (edit.type === "file") onCreated(path);
      else setExpanded((s) => new Set([...s, ...ancestors(path), path]));
    } else {
      await rename.mutateAsync({ sessionId, from: edit.path, to: path });
      onRenamed(edit.path, path);
      setSelected({ path, type: edit.type });
    }
    endEdit(!(edit.kind === "new" && edit.type === "file"));
  };
  const deleteRow = (row: Selected | null = selected) => {
    if (!row) return;
    if (
      !confirm(
        `Delete ${markedName(row.path)}${row.type === "dir" ? " and everything in it" : ""}? This cannot be undone.`,
      )
    )
      return;
    setOpError(undefined);
    remove.mutate({ sessionId, path: row.path }, { onSuccess: () => (onDeleted(row.path), setSelected(null)) });
  };
  /** The file's bytes from the runner, saved by the browser under the file's name. */
  const download = async (path: string) => {
    setOpError(undefined);
    try {
      const raw = await queryClient.fetchQuery(trpc.files.raw.queryOptions({ sessionId, path }, { staleTime: 0 }));
      const bytes = Uint8Array.from(atob(raw.base64), (c) => c.charCodeAt(0));
      const url = URL.createObjectURL(new Blob([bytes]));
      const a = Object.assign(document.createElement("a"), { href: url, download: path.split("/").pop()! });
      a.click();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    } catch (err) {
      setOpError((err as Error).message);
    }
  };
  const openMenu = (x: number, y: number, row: Selected | null) => {
    if (row) setSelected(row);
    setMenu({ x, y, row });
  };
  const closeMenu = useCallback(() => setMenu(null), []);
  const menuItems = (row: Selected | null): MenuItem[] => {
    const items: MenuItem[] = [];
    if (!readOnly) {
      items.push(
        { label: "New File…", run: () => startNew("file", row) },
        { label: "New Folder…", run: () => startNew("dir", row) },
      );
      items.push({ label: "Upload Files…", run: () => uploads.choose(folderFor(row)) });
    }
    if (row) {
      if (row.type !== "dir") items.unshift({ label: "Open", keys: "Enter", run: () => onOpen(row.path) });
      if (!readOnly)
        items.push(
          { label: "Rename…", keys: "F2", run: () => startRename(row) },
          { label: "Delete", keys: "Del", run: () => deleteRow(row) },
        );
      items.push({
        label: "Copy Path",
        run: () =>
          void navigator.clipboard?.writeText(row.path).catch(() => setOpError("The browser did not allow copying.")),
      });
      if (row.type === "file" && !readOnly) items.push({ label: "Download", run: () => void download(row.path) });
    }
    return items;
  };
  const onContextMenu = (e: MouseEvent, row: Selected | null) => {
    e.preventDefault();
    e.stopPropagation();
    if (!edit && menuItems(row).length > 0) openMenu(e.clientX, e.clientY, row);
  };

  // The row and helpers are read as they are when the command arrives.
  useIdeCommand("tree.command", (command) => {
    if (readOnly) return;
    const at: Selected | null = command.at ? { path: command.at, type: "file" } : selected;
    if (command.kind === "file" || command.kind === "dir") startNew(command.kind, at);
    else if (command.at) (command.kind === "rename" ? startRename : deleteRow)(at);
  });

  const rows = useMemo(() => visibleRows(tree, expanded), [tree, expanded]);
  useEffect(() => onFoldersOpen?.([...expanded].sort()), [expanded, onFoldersOpen]);
  // The file opened in the editor (from the tree, quick open, search or a tool card) is revealed
  // as VS Code's explorer does: its folders open and its row scrolls into view, once per opening.
  const reveal = useRef<string | null>(null);
  /** Scrolls the row of `path` into view; false when it is not on screen. */
  const scrollToRow = (path: string) => {
    const row = treeRef.current?.querySelector(`[data-path="${CSS.escape(path)}"]`);
    row?.scrollIntoView({ block: "nearest" });
    return !!row;
  };
  useEffect(() => {
    if (!activePath) return;
    reveal.current = activePath;
    const folders = ancestors(activePath);
    setExpanded((s) => (folders.every((f) => s.has(f)) ? s : new Set([...s, ...folders])));
  }, [activePath]);
  // After the commit that shows the row: at once when its folders were open, else once they are.
  useEffect(() => {
    if (reveal.current && scrollToRow(reveal.current)) reveal.current = null;
  }, [rows, activePath]);
  useEffect(() => {
    if (selected) scrollToRow(selected.path);
  }, [selected]);
  const setOpen = (path: string, open: boolean) =>
    setExpanded((s) => {
      const next = new Set(s);
      if (open) next.add(path);
      else next.delete(path);
      return next;
    });
  const onKeyDown = (e: KeyboardEvent) => {
    if ((e.key === "F10" && e.shiftKey) || e.key === "ContextMenu") {
      e.preventDefault();
      const row =
        selected &&
        treeRef.current?.querySelector(`[data-path="${CSS.escape(selected.path)}"]`)?.getBoundingClientRect();
      const box = row ?? treeRef.current!.getBoundingClientRect();
      return openMenu(box.left + 16, box.top + (row ? box.height : 8), selected);
    }
    const action = treeKey(e.key, rows, selected?.path ?? null);
    if (!action || (readOnly && (action.type === "rename" || action.type === "delete"))) return;
    e.preventDefault();
    const rowType = (path: string) => rows.find((r) => r.path === path)!.type;
    switch (action.type) {
      case "select":
        return setSelected({ path: action.path, type: rowType(action.path) });
      case "open":
        return onOpen(action.path);
      case "expand":
      case "collapse":
        return setOpen(action.path, action.type === "expand");
      case "rename":
        return startRename();
      case "delete":
        return deleteRow();
    }
  };

  const nameBox = (e: TreeEdit, depth: number) => (
    <TreeNameBox
      key={`${e.kind}:${e.kind === "new" ? `${e.type}:${e.parent}` : e.path}`}
      edit={e}
      depth={depth}
      exists={exists}
      onSubmit={submitEdit}
      onCancel={() => endEdit()}
    />
  );
  /** The name box of a new item, first in its folder. */
  const newBoxIn = (parent: string, depth: number) =>
    edit?.kind === "new" && edit.parent === parent && <li role="none">{nameBox(edit, depth)}</li>;

  const nameWithMark = ({ path, name }: TreeNode, isDir: boolean) => {
    const status = isDir ? (changes.folders.has(path) ? "modified" : undefined) : changes.files.get(path);
    // A name's control or bidi characters show as marks (visible-text.tsx), not as what they do.
    if (!status) return <VisibleText text={name} name />;
    const mark = isDir ? "•" : MARK_LETTER[status];
    const title = isDir ? "Holds uncommitted changes" : `${status === "added" ? "Added" : "Modified"}, not committed`;
    return (
      <>
        <span className={`${styles.name} ${styles[status]}`}>
          <VisibleText text={name} name />
        </span>
        <span className={`${styles.mark} ${styles[status]}`} title={title} data-testid="tree-mark" data-mark={mark}>
          {mark}
        </span>
      </>
    );
  };

  const render = (n: TreeNode, depth: number) => {
    const isDir = n.type === "dir";
    const open = expanded.has(n.path);
    const row: Selected = { path: n.path, type: n.type };
    const newHere = newBoxIn(n.path, depth + 1);
    return (
      <li key={n.path} role="none">
        {edit?.kind === "rename" && edit.path === n.path ? (
          nameBox(edit, depth)
        ) : (
          <div
            role="treeitem"
            aria-selected={selected?.path === n.path}
            aria-expanded={isDir ? open : undefined}
            className={`${styles.row} ${selected?.path === n.path ? styles.selected : ""} ${activePath === n.path ? styles.active : ""} ${isDir && drop.target === n.path ? styles.dropInto : ""}`}
            style={{ paddingLeft: 8 + depth * 12 }}
            data-testid="tree-item"
            data-path={n.path}
            data-type={n.type}
            onClick={() => {
              setSelected(row);
              if (isDir) setOpen(n.path, !open);
              else onOpen(n.path);
            }}
            onContextMenu={(e) => onContextMenu(e, row)}
          >
            <span className={styles.icon}>{isDir ? (open ? "▾" : "▸") : ""}</span>
            {nameWithMark(n, isDir)}
          </div>
        )}
        {isDir && open && (n.children.length > 0 || newHere) && (
          <ul role="group">
            {newHere}
            {n.children.map((c) => render(c, depth + 1))}
          </ul>
        )}
      </li>
    );
  };

  return (
    <div className={styles.pane}>
      <div className={styles.toolbar}>
        <span className={styles.title}>Files</span>
        {!readOnly && (
          <>
            <button title="New file" aria-label="New file" onClick={() => startNew("file")} data-testid="new-file">
              + File
            </button>
            <button title="New folder" aria-label="New folder" onClick={() => startNew("dir")} data-testid="new-folder">
              + Folder
            </button>
            <button
              title="Rename (F2)"
              aria-label="Rename"
              disabled={!selected}
              onClick={() => startRename()}
              data-testid="rename"
            >
              Rename
            </button>
            <button
              title="Delete (Del)"
              aria-label="Delete"
              disabled={!selected}
              onClick={() => deleteRow()}
              data-testid="delete"
            >
              Delete
            </button>
          </>
        )}
      </div>
      {(opError || error) && <div className={styles.error}>{opError ?? error}</div>}
      {loading && entries.length === 0 && (
        <div className="muted" style={{ padding: 8 }}>
          Loading files…
        </div>
      )}
      {uploads.busy && (
        <div className="muted" style={{ padding: "2px 8px" }} data-testid="uploading">
          Uploading {uploads.busy}…
        </div>
      )}
      <ul
        ref={treeRef}
        className={`${styles.tree} ${drop.target === "" ? styles.dropInto : ""}`}
        data-testid="file-tree"
        {...drop.handlers}
        role="tree"
        aria-label="Files"
        tabIndex={0}
        onKeyDown={onKeyDown}
        onContextMenu={(e) => onContextMenu(e, null)}
      >
        {newBoxIn("", 0)}
        {tree.map((n) => render(n, 0))}
      </ul>
      {cut.map((folder) => (
        <div key={folder} className="muted" style={{ padding: 8 }} data-testid="tree-cut">
          {folder ? `${folder}/` : "The workspace"} has more entries than the tree lists: only the first{" "}
          {FILE_LIMITS.listMax} are shown.
        </div>
      ))}
      {menu && <TreeMenu x={menu.x} y={menu.y} items={menuItems(menu.row)} onClose={closeMenu} />}
    </div>
  );
}
