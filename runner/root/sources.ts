// Where a new workspace's files come from (workspace.create's `source`): one filler per kind.
// `empty` is built in. Other kinds register here from their own files with one line each in
// SOURCE_MODULES below (git: runner/root/source-git.ts; archive: runner/root/source-archive.ts),
// each module calling registerSource(kind, filler) when imported.
//
// A filler gets the staging folder (a descriptor opened without following links, and its real
// path for a child process's cwd or bubblewrap bind), fills it, and throws SourceError with a
// message for the person when it cannot: the staging folder is then removed, nothing is kept.
// It must keep everything it writes inside that folder (no links out; archives checked before
// extraction) and honour `signal` (cancel, deadline, runner shutdown).
import type { WorkspaceSource } from "../../server/protocol/workspace-ops";

export class SourceError extends Error {}

export interface FillContext<K extends WorkspaceSource["kind"] = WorkspaceSource["kind"]> {
  workspaceId: string;
  source: Extract<WorkspaceSource, { kind: K }>;
  staging: { dirFd: number; path: string };
  signal: AbortSignal;
  /** Progress lines for the server (shown while the create runs). */
  progress(line: string): void;
}

export type SourceFiller<K extends WorkspaceSource["kind"] = WorkspaceSource["kind"]> = (
  ctx: FillContext<K>,
) => Promise<void>;

const fillers = new Map<string, SourceFiller<any>>();

export function registerSource<K extends WorkspaceSource["kind"]>(kind: K, filler: SourceFiller<K>): void {
  if (fillers.has(kind)) throw new Error(`workspace source "${kind}" registered twice`);
  fillers.set(kind, filler);
}

registerSource("empty", async () => {});

/** Modules that register a source kind when imported; one that fails to load fails every create that needs a filler. */
const SOURCE_MODULES: string[] = [];

let loaded: Promise<void> | undefined;
export function loadSources(): Promise<void> {
  loaded ??= Promise.all(SOURCE_MODULES.map((m) => import(m))).then(() => undefined);
  return loaded;
}

export async function fillerFor(kind: WorkspaceSource["kind"]): Promise<SourceFiller | undefined> {
  await loadSources();
  return fillers.get(kind);
}
