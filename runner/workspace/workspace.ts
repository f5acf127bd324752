// One workspace folder served by a runner: confinement, the read ledger, serialized atomic
// writes with rollback and the diff budget, the version counter and change events (tool writes
// immediately, the person's own edits through a debounced watcher).
import { constants } from "node:fs";
import { access, realpath, stat } from "node:fs/promises";
import { readNoFollow, applyChange, revert, TEMP_MARK, type Undo } from "./atomic";
import { WorkspaceFs } from "./fs-at";
import { Helpers } from "./helpers";
import { DEFAULT_BUDGET, overBudget, WorkspaceDiff, type DiffBudget } from "./diff";
import { ReadLedger, sha256 } from "./ledger";
import { resolveIn, type ResolvedPath } from "./paths";
import { watchInProcess, type WatchSource } from "./watch";
import { SandboxedWatch } from "./watch-sandboxed";
import { burstFolders } from "./bursts";
import { logFn } from "../log";
import { FILE_LIMITS } from "../../server/protocol/file-ops";

export class WorkspaceError extends Error {}

/** A change a tool wants made: new content (null deletes) guarded by the hash it was computed from. */
export interface FileChange {
  path: ResolvedPath;
  content: Buffer | string | null;
  /** sha256 of the content the change was computed from; null: the file must not exist. */
  expectHash: string | null;
}

/** Top-level entries announced when the watcher lost track: as many as a listing shows at most. */
const ANNOUNCED_MAX = FILE_LIMITS.listMax;

export type ChangeListener = (paths: string[], version: number) => void;

export interface WorkspaceOptions {
  budget?: Partial<DiffBudget>;
  /**
   * Watch the folder for changes made outside the file tools (default true). "when-served": from
   * serve() (runner/served.ts), once the exec extension has said whether commands are sandboxed,
   * so a large tree is crawled once, where it is watched, not in the runner first and again in
   * the sandbox.
   */
  watch?: boolean | "when-served";
  debounceMs?: number;
}

export class Workspace {
  readonly ledger = new ReadLedger();
  readonly diff: WorkspaceDiff;
  readonly budget: DiffBudget;
  private versionCounter = 0;
  private readonly listeners = new Set<ChangeListener>();
  private writeChain: Promise<unknown> = Promise.resolve();
  private watcher?: WatchSource;
  private stopFollowingSandbox?: () => void;
  private watchStarted = false;
  private pending = new Set<string>();
  private debounce?: NodeJS.Timeout;
  /** Paths the tools just wrote (and already announced), so the watcher's echo is dropped. */
  private readonly echoes = new Map<string, number>();
  private readonly sessionWrites = new Map<string, Set<string>>();

  /** How ripgrep and git are started on this workspace (sandboxed when commands are). */
  readonly helpers: Helpers;

  private constructor(
    readonly root: string,
    readonly files: WorkspaceFs,
    private readonly options: WorkspaceOptions,
  ) {
    this.helpers = new Helpers(files);
    this.diff = new WorkspaceDiff(files, this);
    const given = Object.entries(options.budget ?? {}).filter(([, v]) => v !== undefined);
    this.budget = { ...DEFAULT_BUDGET, ...Object.fromEntries(given) };
  }

  /** Opens `dir`, refusing a missing, non-directory or unreadable folder with one clear line. */
  static async open(dir: string, options: WorkspaceOptions = {}): Promise<Workspace> {
    let root: string;
    try {
      root = await realpath(dir);
    } catch {
      throw new WorkspaceError(`workspace ${dir} does not exist`);
    }
    const st = await stat(root);
    if (!st.isDirectory()) throw new WorkspaceError(`workspace ${dir} is not a directory`);
    try {
      await access(root, constants.R_OK | constants.W_OK | constants.X_OK);
    } catch {
      throw new WorkspaceError(`workspace ${dir} is not readable and writable by this user`);
    }
    const ws = new Workspace(root, WorkspaceFs.open(root), options);
    if ((options.watch ?? true) === true) ws.watch();
    return ws;
  }

  /** Serves the directory open as `fd` (WorkspaceFs.adopt), known by the path `root`; takes the descriptor. */
  static fromFd(root: string, fd: number, options: WorkspaceOptions = {}): Workspace {
    const ws = new Workspace(root, WorkspaceFs.adopt(root, fd), options);
    if ((options.watch ?? true) === true) ws.watch();
    return ws;
  }

  get version(): number {
    return this.versionCounter;
  }

  /** What `path` names (see paths.ts); every operation on it walks it again through `files`. */
  async resolve(path: string, mode: "read" | "write"): Promise<ResolvedPath> {
    return resolveIn(this.files, path, mode);
  }

  onChange(listener: ChangeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Announces changed paths (workspace-relative) with a new version number. */
  markChanged(paths: string[]): void {
    if (paths.length === 0) return;
    const version = ++this.versionCounter;
    for (const l of this.listeners) l([...new Set(paths)].sort(), version);
  }

  /** Files this session changed through the file tools (git_diff's default scope). */
  writtenBy(sessionId: string): string[] {
    return [...(this.sessionWrites.get(sessionId) ?? [])].sort();
  }

  /**
   * Applies changes all-or-nothing: each file must still hash to what the change was computed
   * from; any failure, or a diff over budget afterwards, puts every file back.
   */
  write(sessionId: string, changes: FileChange[]): Promise<{ version: number; paths: string[] }> {
    const run = this.writeChain.then(() => this.writeNow(sessionId, changes));
    this.writeChain = run.catch(() => {});
    return run;
  }

  private async writeNow(sessionId: string, changes: FileChange[]): Promise<{ version: number; paths: string[] }> {
    const undos: Undo[] = [];
    try {
      for (const change of changes) {
        const before = await readNoFollow(this.files, change.path.rel);
        const hash = before ? sha256(before.data) : null;
        if (hash !== change.expectHash) {
          throw new WorkspaceError(
            change.expectHash === null
              ? `${change.path.rel} already exists; read it with read_file before overwriting it`
              : `${change.path.rel} changed on disk while this change was being prepared; read it again`,
          );
        }
        const content = change.content === null ? null : Buffer.from(change.content);
        undos.push(await applyChange(this.files, change.path.rel, content, before));
        // Now, not after measuring the diff below: the watcher's echo of this write may come first.
        this.echoes.set(change.path.rel, Date.now());
        this.diff.rememberBaseline(change.path.rel, before?.data ?? null);
      }
      const size = await this.diff.measure(this.budget);
      const over = overBudget(size, this.budget);
      if (over) {
        throw new WorkspaceError(
          `change rolled back: the workspace's uncommitted diff would exceed its budget (${over}). ` +
            `Commit or revert existing changes, or make a smaller change.`,
        );
      }
    } catch (err) {
      for (const undo of undos.reverse()) await revert(this.files, undo).catch(() => {});
      throw err;
    }
    const paths = changes.map((c) => c.path.rel);
    const mine = this.sessionWrites.get(sessionId) ?? new Set<string>();
    this.sessionWrites.set(sessionId, mine);
    const now = Date.now();
    for (const c of changes) {
      mine.add(c.path.rel);
      this.echoes.set(c.path.rel, now);
      if (c.content === null) this.ledger.forget(sessionId, c.path.rel);
      else this.ledger.recordWrite(sessionId, c.path.rel, sha256(Buffer.from(c.content)));
    }
    this.markChanged(paths);
    return { version: this.versionCounter, paths };
  }

  /**
   * Native recursive watching (@parcel/watcher: inotify here). Node 20's fs.watch with
   * `recursive` on Linux re-reads a folder for each file created in it: 5,100 new files cost
   * the runner 22 s of blocked event loop, and an `npm install` far more. In the commands'
   * sandbox once there is one (watch.ts says why).
   */
  private watch(): void {
    this.watchStarted = true;
    this.startWatching();
    this.stopFollowingSandbox = this.helpers.onSandbox(() => this.startWatching());
  }

  /** Starts the watcher `watch: "when-served"` held back (once; never after stopWatching). */
  watchWhenServed(): void {
    if (this.options.watch === "when-served" && !this.watchStarted) this.watch();
  }

  private startWatching(): void {
    this.watcher?.dispose();
    const sink = {
      changed: (paths: string[]) => this.watched(paths),
      // Which files changed is unknown, so every top-level entry is announced, and each folder
      // stands for all it holds.
      lost: () => this.announceEverything(),
    };
    // Watching is a convenience (the person's own edits); tool writes still announce themselves.
    this.watcher = this.helpers.sandboxed
      ? new SandboxedWatch(this.files.root, this.helpers, sink, logFn("watch"))
      : watchInProcess(this.root, sink);
  }

  private watched(paths: string[]): void {
    for (const rel of paths) if (!rel.includes(TEMP_MARK)) this.pending.add(rel);
    if (this.pending.size === 0) return;
    clearTimeout(this.debounce);
    this.debounce = setTimeout(() => this.flushWatched(), this.options.debounceMs ?? 100);
  }

  /** Every top-level entry, as far as a listing shows them (the first ANNOUNCED_MAX by name: a
   *  root of a million files would otherwise be read whole and sent as a million paths). */
  private announceEverything(): void {
    this.files.listSmallest("", ANNOUNCED_MAX).then(
      (listed) =>
        this.markChanged(
          (listed?.entries ?? []).map((e) => e.name).filter((n) => n !== ".git" && !n.includes(TEMP_MARK)),
        ),
      () => undefined,
    );
  }

  /** Resolves once the watcher is listening (changes before then are not reported). */
  async watching(): Promise<boolean> {
    return (await this.watcher?.ready) ?? false;
  }

  private flushWatched(): void {
    const now = Date.now();
    const paths = [...this.pending].filter((p) => {
      const at = this.echoes.get(p);
      return at === undefined || now - at > 1000;
    });
    this.pending.clear();
    for (const [p, at] of this.echoes) if (now - at > 1000) this.echoes.delete(p);
    const bursts = burstFolders(paths);
    if (bursts.includes("")) this.announceEverything();
    this.markChanged([...paths, ...bursts.filter((dir) => dir && !paths.includes(dir))]);
  }

  /** Ends the watcher for good (its process too, in the sandbox): before the sandbox's own
   *  disposal, which waits for the helpers' cgroup the watch server runs in to empty. */
  stopWatching(): void {
    this.watchStarted = true;
    clearTimeout(this.debounce);
    this.stopFollowingSandbox?.();
    this.stopFollowingSandbox = undefined;
    this.watcher?.dispose();
    this.watcher = undefined;
  }

  dispose(): void {
    this.stopWatching();
    this.listeners.clear();
    this.files.close();
  }
}
