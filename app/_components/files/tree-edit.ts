// The file tree's inline name box, pure: what a new file, new folder or rename is about to do,
// the workspace path a typed name leads to, and why a name cannot be used (shown under the box
// as the person types, as VS Code's explorer does). A name is taken relative to the folder the
// box is in; "sub/name.ts" makes the missing folders, as the runner's create and rename do.
import type { TreeEntry } from "../../../server/protocol/ide-types";

export type TreeEdit =
  { kind: "new"; type: "file" | "dir"; parent: string } | { kind: "rename"; path: string; type: TreeEntry["type"] };

/** The folder the box sits in ("" is the workspace root). */
export function editFolder(edit: TreeEdit): string {
  return edit.kind === "new" ? edit.parent : parentOf(edit.path);
}

export function parentOf(path: string): string {
  const slash = path.lastIndexOf("/");
  return slash < 0 ? "" : path.slice(0, slash);
}

export const baseName = (path: string) => path.slice(path.lastIndexOf("/") + 1);

/** What the box starts with: empty for a new item, the current name for a rename. */
export function initialName(edit: TreeEdit): string {
  return edit.kind === "rename" ? baseName(edit.path) : "";
}

/** The part of a name selected when renaming starts: the name without its extension
 *  ("notes.md" → "notes"; ".env" and "Makefile" whole), so typing keeps the extension. */
export function nameSelection(name: string): [number, number] {
  const dot = name.lastIndexOf(".");
  return [0, dot > 0 ? dot : name.length];
}

export type NameCheck = { ok: true; path: string; unchanged: boolean } | { ok: false; message: string };

/** The workspace path `typed` leads to from the box's folder, or why it cannot be used.
 *  `exists` answers for paths the tree lists, with their type (lookup below). */
export function checkName(
  edit: TreeEdit,
  typed: string,
  exists: (path: string) => TreeEntry["type"] | false,
): NameCheck {
  const name = typed.trim();
  if (!name) return { ok: false, message: "A file or folder name must be provided." };
  if (name.startsWith("/"))
    return { ok: false, message: "A name cannot start with /: it is taken from the folder shown." };
  if (name.includes("\\")) return { ok: false, message: "Use / between folders, not \\." };
  const parts = name.split("/");
  if (parts.some((p) => p === ""))
    return { ok: false, message: "A name cannot hold an empty folder (//) or end with /." };
  if (parts.some((p) => p === "." || p === ".."))
    return { ok: false, message: "A name cannot hold . or .. : the box works inside its folder." };
  if (parts[0] === ".git")
    return { ok: false, message: ".git is the repository's own folder and cannot be edited here." };
  const folder = editFolder(edit);
  const path = folder ? `${folder}/${name}` : name;
  if (edit.kind === "rename") {
    if (path === edit.path) return { ok: true, path, unchanged: true };
    if (path.startsWith(`${edit.path}/`))
      return { ok: false, message: `${baseName(edit.path)} cannot be moved into itself.` };
  }
  if (exists(path)) return { ok: false, message: `${name} already exists here. Choose a different name.` };
  for (let at = path.indexOf("/"); at >= 0; at = path.indexOf("/", at + 1)) {
    if (exists(path.slice(0, at)) === "file")
      return { ok: false, message: `${path.slice(0, at)} is a file, not a folder.` };
  }
  return { ok: true, path, unchanged: false };
}

/** `exists` for checkName from the tree's listing: the entry's type, or false. */
export function lookup(entries: TreeEntry[]): (path: string) => TreeEntry["type"] | false {
  const types = new Map(entries.map((e) => [e.path, e.type] as const));
  return (path) => types.get(path) ?? false;
}
