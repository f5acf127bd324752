"use client";
// The workspace tree from the runner, refreshed whenever the session reports changed files.
// New file/folder (in the selected folder), rename and delete (after confirmation) go through
// the runner too; errors are shown in the pane and nothing is lost. Read-only: browsing only.
// The tree takes the keyboard when focused (tree-model.ts) and keeps the selected row in view.
import { useEffect, useMemo, useRef, useState, type KeyboardEvent } from "react";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useTRPC } from "../../_lib/trpc";
import { useReadOnly } from "../../_lib/read-only";
import type { TreeEntry } from "../../../server/services/files";
import styles from "./files.module.css";
import { ancestors, buildTree, treeKey, visibleRows, type TreeNode } from "./tree-model";

interface Props {
  sessionId: string;
  entries: TreeEntry[];
  truncated: boolean;
  loading: boolean;
  error?: string;
  activePath: string | null;
  onOpen(path: string): void;
  onRenamed(from: string, to: string): void;
  onDeleted(path: string): void;
}

export function FileTree({ sessionId, entries, truncated, loading, error, activePath, onOpen, onRenamed, onDeleted }: Props) {
  const trpc = useTRPC();
  const readOnly = useReadOnly();
  const [expanded, setExpanded] = useState<Set<string>>(new Set());
  const [selected, setSelected] = useState<{ path: string; type: TreeEntry["type"] } | null>(null);
  const [opError, setOpError] = useState<string>();
  const tree = useMemo(() => buildTree(entries), [entries]);
  const queryClient = useQueryClient();
  const onError = (err: { message: string }) => setOpError(err.message);
  // The change event refreshes the tree too; this makes the person's own action show at once.
  const onSettled = () => queryClient.invalidateQueries({ queryKey: trpc.files.tree.queryKey({ sessionId }) });
  const create = useMutation(trpc.files.create.mutationOptions({ onError, onSettled }));
  const rename = useMutation(trpc.files.rename.mutationOptions({ onError, onSettled }));
  const remove = useMutation(trpc.files.remove.mutationOptions({ onError, onSettled }));

  const baseDir = selected ? (selected.type === "dir" ? selected.path : selected.path.split("/").slice(0, -1).join("/")) : "";
  const newItem = (kind: "file" | "dir") => {
    const name = prompt(kind === "file" ? `New file in /${baseDir}` : `New folder in /${baseDir}`)?.trim();
    if (!name) return;
    const path = baseDir ? `${baseDir}/${name}` : name;
    setOpError(undefined);
    create.mutate({ sessionId, path, kind }, { onSuccess: () => (kind === "file" ? onOpen(path) : setExpanded((s) => new Set(s).add(path))) });
  };
  const renameSelected = () => {
    if (!selected) return;
    const to = prompt(`Rename ${selected.path} to`, selected.path)?.trim();
    if (!to || to === selected.path) return;
    setOpError(undefined);
    rename.mutate({ sessionId, from: selected.path, to }, { onSuccess: () => (onRenamed(selected.path, to), setSelected({ ...selected, path: to })) });
  };
  const deleteSelected = () => {
    if (!selected) return;
    if (!confirm(`Delete ${selected.path}${selected.type === "dir" ? " and everything in it" : ""}? This cannot be undone.`)) return;
    setOpError(undefined);
    remove.mutate({ sessionId, path: selected.path }, { onSuccess: () => (onDeleted(selected.path), setSelected(null)) });
  };

  const rows = useMemo(() => visibleRows(tree, expanded), [tree, expanded]);
  const treeRef = useRef<HTMLUListElement>(null);
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
        return renameSelected();
      case "delete":
        return deleteSelected();
    }
  };

  const render = (n: TreeNode, depth: number) => {
    const isDir = n.type === "dir";
    const open = expanded.has(n.path);
    return (
      <li key={n.path} role="none">
        <div
          role="treeitem"
          aria-selected={selected?.path === n.path}
          aria-expanded={isDir ? open : undefined}
          className={`${styles.row} ${selected?.path === n.path ? styles.selected : ""} ${activePath === n.path ? styles.active : ""}`}
          style={{ paddingLeft: 8 + depth * 12 }}
          data-testid="tree-item"
          data-path={n.path}
          data-type={n.type}
          onClick={() => {
            setSelected({ path: n.path, type: n.type });
            if (isDir) setOpen(n.path, !open);
            else onOpen(n.path);
          }}
        >
          <span className={styles.icon}>{isDir ? (open ? "▾" : "▸") : ""}</span>
          {n.name}
        </div>
        {isDir && open && n.children.length > 0 && <ul role="group">{n.children.map((c) => render(c, depth + 1))}</ul>}
      </li>
    );
  };

  return (
    <div className={styles.pane}>
      <div className={styles.toolbar}>
        <span className={styles.title}>Files</span>
        {!readOnly && (
          <>
            <button title="New file" aria-label="New file" onClick={() => newItem("file")} data-testid="new-file">+ File</button>
            <button title="New folder" aria-label="New folder" onClick={() => newItem("dir")}>+ Folder</button>
            <button title="Rename" aria-label="Rename" disabled={!selected} onClick={renameSelected} data-testid="rename">Rename</button>
            <button title="Delete" aria-label="Delete" disabled={!selected} onClick={deleteSelected} data-testid="delete">Delete</button>
          </>
        )}
      </div>
      {(opError || error) && <div className={styles.error}>{opError ?? error}</div>}
      {loading && entries.length === 0 && <div className="muted" style={{ padding: 8 }}>Loading files…</div>}
      <ul ref={treeRef} className={styles.tree} data-testid="file-tree" role="tree" aria-label="Files" tabIndex={0} onKeyDown={onKeyDown}>
        {tree.map((n) => render(n, 0))}
      </ul>
      {truncated && <div className="muted" style={{ padding: 8 }}>Only the first {entries.length} entries are shown.</div>}
    </div>
  );
}
