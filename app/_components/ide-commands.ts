// The command palette's commands (Ctrl+Shift+P, or ">" in quick open): every pane action the
// IDE has keys or buttons for, named as VS Code names them, with their keys. Which are offered
// depends on the moment: a read-only viewer gets the views only, Save, Rename and Delete need
// an open file (they act on it), Stop a running turn. New File and New Folder open the tree's
// name box, in the open file's folder.
import type { Command } from "./editor/palette";

export interface IdeCommandActions {
  quickOpen(): void;
  goToLine(): void;
  explorer(): void;
  search(): void;
  replace(): void;
  changes(): void;
  /** "Changes by the agent" for the whole session (absent: not offered). */
  agentChanges?(): void;
  toggleTerminal(): void;
  togglePanel(): void;
  toggleSideBar(): void;
  toggleChat(): void;
  newTerminal(): void;
  togglePreview(): void;
  save(): void;
  newFile(): void;
  newFolder(): void;
  renameFile(): void;
  deleteFile(): void;
  stop(): void;
  compact(): void;
  chooseModel(): void;
  share(): void;
  home(): void;
  switchSession(): void;
  newSession(): void;
  previousEditor(): void;
}

export function ideCommands(
  a: IdeCommandActions,
  at: { readOnly: boolean; fileOpen: boolean; running: boolean },
): Command[] {
  const all: (Command & { when?: boolean })[] = [
    { id: "quickOpen", label: "Go to File…", keys: "Ctrl+P", run: a.quickOpen },
    { id: "goToLine", label: "Go to Line…", keys: "Ctrl+G", run: a.goToLine, when: at.fileOpen },
    { id: "explorer", label: "View: Show Explorer", keys: "Ctrl+Shift+E", run: a.explorer },
    { id: "search", label: "Search: Find in Files", keys: "Ctrl+Shift+F", run: a.search },
    { id: "replace", label: "Search: Replace in Files", keys: "Ctrl+Shift+H", run: a.replace, when: !at.readOnly },
    { id: "changes", label: "View: Show Changes", keys: "Ctrl+Shift+G", run: a.changes },
    {
      id: "agentChanges",
      label: "Agent: Review Changes by the Agent",
      run: a.agentChanges ?? (() => {}),
      when: !!a.agentChanges,
    },
    { id: "toggleSideBar", label: "View: Toggle Side Bar", keys: "Ctrl+B", run: a.toggleSideBar },
    { id: "togglePanel", label: "View: Toggle Panel (Terminal)", keys: "Ctrl+J", run: a.togglePanel },
    { id: "toggleChat", label: "View: Toggle Chat", keys: "Ctrl+Alt+B", run: a.toggleChat },
    { id: "toggleTerminal", label: "View: Toggle Terminal", keys: "Ctrl+`", run: a.toggleTerminal, when: !at.readOnly },
    {
      id: "newTerminal",
      label: "Terminal: New Terminal",
      keys: "Ctrl+Shift+`",
      run: a.newTerminal,
      when: !at.readOnly,
    },
    {
      id: "togglePreview",
      label: "View: Toggle Preview",
      keys: "Ctrl+Alt+P",
      run: a.togglePreview,
      when: !at.readOnly,
    },
    { id: "save", label: "File: Save", keys: "Ctrl+S", run: a.save, when: !at.readOnly && at.fileOpen },
    { id: "newFile", label: "File: New File…", run: a.newFile, when: !at.readOnly },
    { id: "newFolder", label: "File: New Folder…", run: a.newFolder, when: !at.readOnly },
    { id: "renameFile", label: "File: Rename This File…", run: a.renameFile, when: !at.readOnly && at.fileOpen },
    { id: "deleteFile", label: "File: Delete This File", run: a.deleteFile, when: !at.readOnly && at.fileOpen },
    { id: "stop", label: "Agent: Stop the Running Turn", keys: "Esc", run: a.stop, when: !at.readOnly && at.running },
    {
      id: "compact",
      label: "Agent: Summarize the Conversation (/compact)",
      run: a.compact,
      when: !at.readOnly && !at.running,
    },
    { id: "chooseModel", label: "Agent: Choose Model…", run: a.chooseModel, when: !at.readOnly },
    { id: "share", label: "Session: Share…", run: a.share, when: !at.readOnly },
    { id: "home", label: "Session: Back to All Sessions", run: a.home, when: !at.readOnly },
    {
      id: "switchSession",
      label: "Session: Switch Session…",
      keys: "Ctrl+Alt+S",
      run: a.switchSession,
      when: !at.readOnly,
    },
    { id: "newSession", label: "Session: New Session", run: a.newSession, when: !at.readOnly },
    {
      id: "previousEditor",
      label: "View: Open Previous Editor (most recent first)",
      keys: "Ctrl+Tab, or Ctrl+Alt+Tab",
      run: a.previousEditor,
      when: at.fileOpen,
    },
  ];
  return all.filter((c) => c.when !== false).map(({ when: _when, ...c }) => c);
}
