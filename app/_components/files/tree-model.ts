// The file tree's model, pure (the component applies what it returns): the nested tree built
// from the runner's flat listing, the rows on screen, and the keyboard as in VS Code's
// explorer: arrows move the selection through the rows on screen, Right/Left open and close
// folders (or step into and out of them), Enter opens a file or toggles a folder, F2 renames,
// Delete deletes.
import type { TreeEntry } from "../../../server/protocol/ide-types";

export interface TreeNode {
  name: string;
  path: string;
  type: TreeEntry["type"];
  children: TreeNode[];
}

/** The folders that hold `path`, outermost first ("a/b/c.ts" → "a", "a/b"). */
export function ancestors(path: string): string[] {
  const parts = path.split("/").slice(0, -1);
  return parts.map((_, i) => parts.slice(0, i + 1).join("/"));
}

/** Folders first, then by name, at every level; a parent missing from the listing is made up. */
export function buildTree(entries: TreeEntry[]): TreeNode[] {
  const root: TreeNode = { name: "", path: "", type: "dir", children: [] };
  const dirs = new Map<string, TreeNode>([["", root]]);
  const sorted = [...entries].sort((a, b) => a.path.localeCompare(b.path));
  for (const e of sorted) {
    const slash = e.path.lastIndexOf("/");
    const parentPath = slash < 0 ? "" : e.path.slice(0, slash);
    let parent = dirs.get(parentPath);
    if (!parent) {
      parent = { name: parentPath.split("/").pop()!, path: parentPath, type: "dir", children: [] };
      dirs.set(parentPath, parent);
      root.children.push(parent);
    }
    const node: TreeNode = { name: e.path.slice(slash + 1), path: e.path, type: e.type, children: [] };
    parent.children.push(node);
    if (e.type === "dir") dirs.set(e.path, node);
  }
  const order = (n: TreeNode) => {
    n.children.sort((a, b) =>
      (a.type === "dir") !== (b.type === "dir") ? (a.type === "dir" ? -1 : 1) : a.name.localeCompare(b.name),
    );
    n.children.forEach(order);
  };
  order(root);
  return root.children;
}

export interface TreeRow {
  path: string;
  type: TreeEntry["type"];
  depth: number;
  /** Folders only: shown open. */
  open: boolean;
  /** Folders only: has entries. */
  hasChildren: boolean;
}

export type TreeAction =
  | { type: "select"; path: string }
  | { type: "open"; path: string }
  | { type: "expand"; path: string }
  | { type: "collapse"; path: string }
  | { type: "rename" }
  | { type: "delete" };

/** The rows on screen, in order: the children of open folders only. */
export function visibleRows(
  nodes: TreeNode[],
  expanded: ReadonlySet<string>,
  depth = 0,
  out: TreeRow[] = [],
): TreeRow[] {
  for (const n of nodes) {
    const open = n.type === "dir" && expanded.has(n.path);
    out.push({ path: n.path, type: n.type, depth, open, hasChildren: n.children.length > 0 });
    if (open) visibleRows(n.children, expanded, depth + 1, out);
  }
  return out;
}

/** What `key` does with `selected` among `rows` (undefined: not a tree key). */
export function treeKey(key: string, rows: TreeRow[], selected: string | null): TreeAction | undefined {
  if (rows.length === 0) return undefined;
  const at = selected === null ? -1 : rows.findIndex((r) => r.path === selected);
  const row = at >= 0 ? rows[at] : undefined;
  switch (key) {
    case "ArrowDown":
      return { type: "select", path: rows[Math.min(at + 1, rows.length - 1)].path };
    case "ArrowUp":
      return { type: "select", path: rows[at < 0 ? 0 : Math.max(at - 1, 0)].path };
    case "Home":
      return { type: "select", path: rows[0].path };
    case "End":
      return { type: "select", path: rows[rows.length - 1].path };
    case "ArrowRight":
      if (!row || row.type !== "dir") return undefined;
      if (!row.open) return { type: "expand", path: row.path };
      return row.hasChildren ? { type: "select", path: rows[at + 1].path } : undefined;
    case "ArrowLeft": {
      if (!row) return undefined;
      if (row.type === "dir" && row.open) return { type: "collapse", path: row.path };
      // To the parent folder: the nearest row above that is one level up.
      for (let i = at - 1; i >= 0; i--) if (rows[i].depth < row.depth) return { type: "select", path: rows[i].path };
      return undefined;
    }
    case "Enter":
      if (!row) return undefined;
      if (row.type !== "dir") return { type: "open", path: row.path };
      return row.open ? { type: "collapse", path: row.path } : { type: "expand", path: row.path };
    case "F2":
      return row ? { type: "rename" } : undefined;
    case "Delete":
      return row ? { type: "delete" } : undefined;
    default:
      return undefined;
  }
}
