// The tree's marks for uncommitted changes, as the Changes tab lists them: a file's kind of
// change (A, M) and, on every folder above a changed file, a dot, so a change deep in a closed
// folder can be found from the top. A deleted file has no row; its folders still carry the dot.
import type { PersonChanges } from "../../../server/protocol/person-file-ops";

type Status = PersonChanges["files"][number]["status"];

export interface ChangeMarks {
  files: ReadonlyMap<string, Status>;
  folders: ReadonlySet<string>;
}

export const NO_MARKS: ChangeMarks = { files: new Map(), folders: new Set() };

export function changeMarks(changed: readonly { path: string; status: Status }[] | undefined): ChangeMarks {
  if (!changed?.length) return NO_MARKS;
  const files = new Map<string, Status>();
  const folders = new Set<string>();
  for (const { path, status } of changed) {
    files.set(path, status);
    for (let slash = path.lastIndexOf("/"); slash > 0; slash = path.lastIndexOf("/", slash - 1)) {
      const folder = path.slice(0, slash);
      if (folders.has(folder)) break; // its ancestors are in already
      folders.add(folder);
    }
  }
  return { files, folders };
}

export const MARK_LETTER: Record<Status, string> = { added: "A", modified: "M", deleted: "D" };
