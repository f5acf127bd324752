// Where a workspace's watcher runs. Unsandboxed (the agent's commands then are too), in the
// runner itself. When commands are sandboxed, in a watch server inside that sandbox
// (watch-server.ts), since a watcher that adds watches by path follows a folder swapped for a
// link wherever it leads, and in the sandbox that is only where the agent's commands can look.
// Both hand on raw batches of workspace-relative paths; the workspace filters and debounces them.
import { relative, sep } from "node:path";
import watcher from "@parcel/watcher";

/**
 * Not watched, as VS Code's files.watcherExclude: git's own folder, and what lies inside each
 * package of node_modules (its packages appearing still counts as a change). `npm install`
 * writes tens of thousands of files there, and the tree lists none of them unasked.
 */
export const WATCH_IGNORE = [".git", "**/.git/**", "**/node_modules/*/**"];

export interface WatchSink {
  /** Paths relative to the root, "/"-separated; never empty, never leading out of the root. */
  changed(paths: string[]): void;
  /** The watcher lost track: what changed is unknown. */
  lost(): void;
}

export interface WatchSource {
  /** Resolves once changes are reported (false: the watcher could not start). */
  readonly ready: Promise<boolean>;
  dispose(): void;
}

/** The workspace-relative form of `path`, or undefined for the root itself and anything outside it. */
export function insideRoot(root: string, path: string): string | undefined {
  const rel = relative(root, path).split(sep).join("/");
  return !rel || rel === ".." || rel.startsWith("../") || rel.startsWith("/") ? undefined : rel;
}

export function watchInProcess(root: string, sink: WatchSink): WatchSource {
  const subscription = watcher
    .subscribe(
      root,
      (err, events) => {
        if (err) return sink.lost();
        const paths = events.flatMap((e) => insideRoot(root, e.path) ?? []);
        if (paths.length > 0) sink.changed(paths);
      },
      { ignore: WATCH_IGNORE },
    )
    .catch(() => undefined);
  return {
    ready: subscription.then((s) => !!s),
    dispose: () => void subscription.then((s) => s?.unsubscribe()).catch(() => undefined),
  };
}
