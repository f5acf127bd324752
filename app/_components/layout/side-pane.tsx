"use client";
// The side bar's pane: the Explorer (the tree), Search and Changes tabs over the session's
// workspace (use-workspace.ts). Which tab shows, and the tree's name box, follow the IDE bus
// ("side.show", "tree.command"); what each opens goes to the editor area through the workspace.
import { SideBar } from "../side-bar";
import { ChangesPanel } from "../changes/changes-panel";
import { SearchPanel } from "../search/search-panel";
import { FileTree } from "../files/file-tree";
import type { Workspace } from "./use-workspace";
import styles from "../ide-frame.module.css";

interface Props {
  sessionId: string;
  ws: Workspace;
  runnerUp: boolean;
  hidden: boolean;
}

export function SidePane({ sessionId, ws, runnerUp, hidden }: Props) {
  const { tree, files } = ws;
  return (
    <nav className={styles.files} aria-label="Files" data-testid="pane-files" hidden={hidden}>
      <SideBar
        changeCount={ws.changeCount}
        changes={
          <ChangesPanel
            sessionId={sessionId}
            version={ws.filesVersion}
            enabled={runnerUp}
            selected={ws.diff?.path ?? null}
            onOpen={ws.setDiff}
            onAgentChanges={() => ws.openReview()}
          />
        }
        search={<SearchPanel sessionId={sessionId} onOpen={ws.openHit} />}
        explorer={
          <FileTree
            sessionId={sessionId}
            entries={tree.entries ?? []}
            cut={tree.cut}
            onFoldersOpen={tree.partial ? tree.opening : undefined}
            loading={tree.isPending}
            error={tree.error?.message}
            activePath={ws.active}
            onOpen={ws.openFile}
            onCreated={(path) => ws.openHit({ path, line: 1 })}
            onRenamed={files.rename}
            onDeleted={(p) => files.changed([p])}
            changes={ws.marks}
          />
        }
      />
    </nav>
  );
}
