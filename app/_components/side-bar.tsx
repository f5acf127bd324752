"use client";
// The side bar's tabs: Explorer (the tree), Search and Changes, as VS Code's activity bar
// switches them. Hidden tabs stay mounted, so each keeps its state (a query and its results,
// the selected change); Search mounts on first use, Changes at once, so its badge counts the
// changed files as the agent works. The IDE's keys switch tabs with "side.show" on the IDE bus;
// showing Search sends "search.focus".
import { useState, type ReactNode } from "react";
import { useIdeBus, useIdeCommand } from "../_lib/ide-bus";
import styles from "./ide-frame.module.css";

export type SideView = "files" | "search" | "changes";

interface Props {
  explorer: ReactNode;
  /** Rendered once Search is first shown. */
  search: ReactNode;
  changes: ReactNode;
  /** Files changed (the Changes tab's badge). */
  changeCount?: number;
}

const TITLES: Record<SideView, [string, string]> = {
  files: ["Explorer", "Explorer (Ctrl+Shift+E)"],
  search: ["Search", "Search in files (Ctrl+Shift+F)"],
  changes: ["Changes", "Uncommitted changes (Ctrl+Shift+G)"],
};

export function SideBar({ explorer, search, changes, changeCount }: Props) {
  const [view, setView] = useState<SideView>("files");
  const [used, setUsed] = useState<Set<SideView>>(() => new Set(["files", "changes"]));
  const bus = useIdeBus();
  const open = (v: SideView) => {
    setView(v);
    setUsed((u) => (u.has(v) ? u : new Set(u).add(v)));
    if (v === "search") bus?.send("search.focus");
  };
  useIdeCommand("side.show", open);

  const body = (v: SideView, content: ReactNode) =>
    used.has(v) && (
      <div className={styles.sideBody} hidden={view !== v}>
        {content}
      </div>
    );
  return (
    <>
      <div className={styles.sideTabs} role="tablist" aria-label="Side bar">
        {(Object.keys(TITLES) as SideView[]).map((v) => (
          <button
            key={v}
            type="button"
            role="tab"
            aria-selected={view === v}
            title={TITLES[v][1]}
            onClick={() => open(v)}
            data-testid={`side-${v}`}
          >
            {TITLES[v][0]}
            {v === "changes" && changeCount ? (
              // Capped as VS Code caps its badges: four digits pushed the tab names into ellipses.
              <span className={styles.badge} title={`${changeCount} changed files`}>
                {changeCount > 99 ? "99+" : changeCount}
              </span>
            ) : null}
          </button>
        ))}
      </div>
      {body("changes", changes)}
      {body("search", search)}
      {body("files", explorer)}
    </>
  );
}
