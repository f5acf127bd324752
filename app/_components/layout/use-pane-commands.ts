"use client";
// What the IDE's keys (ide-keys.ts), its command palette (ide-commands.ts) and its pane toggles
// do, in one place: each is a layout change (pane-layout.ts) and/or a command sent to the pane
// that acts on it (the IDE bus). The frame passes what only it knows (the open file, its dialogs,
// the session's API calls).
import { useRef } from "react";
import type { IdeBus } from "../../_lib/ide-bus";
import { focusPendingApproval } from "../chat/approval-notice";
import { ideCommands } from "../ide-commands";
import { useIdeKeys, type IdeKeyActions } from "../ide-keys";
import type { SideView } from "../side-bar";
import type { TreeCommand } from "../files/file-tree";
import type { IdeLayout, Pane } from "./use-ide-layout";
import type { Command } from "../editor/palette";

interface Deps {
  layout: IdeLayout;
  bus: IdeBus;
  readOnly: boolean;
  /** Keys act before the server has said who this is, unless the page is a share view. */
  keysReadOnly: boolean;
  running: boolean;
  /** The file open in the editor. */
  active: string | null;
  openQuick(initial: string): void;
  openReview(): void;
  save(): void;
  cancel(): void;
  compact(): void;
  share(): void;
}

interface PaneCommands {
  /** What the command palette lists. */
  commands: Command[];
  /** A pane's toggle in the top bar: as its key does. */
  toggle(pane: Pane): void;
  /** For the terminal's pane: to tell whether the person is typing in it. */
  terminalPane: React.RefObject<HTMLElement | null>;
}

export function usePaneCommands(d: Deps): PaneCommands {
  const { layout, bus } = d;
  const terminalPane = useRef<HTMLElement>(null);
  const focusBeforeTerm = useRef<Element | null>(null);
  const typingIn = () => !!terminalPane.current?.contains(document.activeElement);
  const leaveTerminal = () => {
    const back = focusBeforeTerm.current;
    if (back instanceof HTMLElement && back.isConnected) back.focus();
  };
  const showSide = (view: SideView) => (layout.show("side"), bus.send("side.show", view));
  const treeCommand = (kind: TreeCommand["kind"]) => (
    showSide("files"),
    bus.send("tree.command", { kind, at: d.active })
  );
  const keyActions: IdeKeyActions = {
    search: () => showSide("search"),
    replace: () => (showSide("search"), bus.send("search.replace")),
    explorer: () => showSide("files"),
    changes: () => showSide("changes"),
    quickOpen: () => d.openQuick(""),
    commandPalette: () => d.openQuick(">"),
    togglePreview: () => {
      if (!layout.fitted.shown.preview) bus.send("preview.focus");
      layout.toggle("preview");
    },
    toggleTerminal: () => {
      // As in VS Code: Ctrl+` hides only the terminal being typed in (focus goes back where it
      // was); an open terminal without focus is focused, not hidden.
      if (layout.fitted.shown.panel && typingIn()) {
        layout.show("panel", false);
        return leaveTerminal();
      }
      if (!typingIn()) focusBeforeTerm.current = document.activeElement;
      layout.show("panel");
      bus.send("terminal.focus");
    },
    togglePanel: () => {
      // Ctrl+J shows or hides the bottom panel whatever has the focus; focus leaves it with it.
      if (layout.fitted.shown.panel && typingIn()) leaveTerminal();
      layout.toggle("panel");
    },
    toggleSideBar: () => layout.toggle("side"),
    toggleChat: () => layout.toggle("chat"),
    newTerminal: () => (layout.show("panel"), bus.send("terminal.new")),
    save: d.save,
    approval: () => {
      if (layout.fitted.shown.chat) return focusPendingApproval();
      // The card is in the hidden chat: it comes back first, and the card is focused once shown.
      if (!document.querySelector('[data-testid="approval-card"][data-state="pending"]')) return false;
      layout.show("chat");
      requestAnimationFrame(() => requestAnimationFrame(() => focusPendingApproval()));
      return true;
    },
    escape: () => d.running && d.cancel(),
  };
  useIdeKeys(keyActions, d.keysReadOnly);
  const commands = ideCommands(
    {
      ...keyActions,
      agentChanges: d.openReview,
      goToLine: () => d.openQuick(":"),
      stop: d.cancel,
      compact: d.compact,
      chooseModel: () => (layout.show("chat"), bus.send("model.choose")),
      share: d.share,
      newFile: () => treeCommand("file"),
      newFolder: () => treeCommand("dir"),
      renameFile: () => treeCommand("rename"),
      deleteFile: () => treeCommand("delete"),
      home: () => window.location.assign("/"),
      switchSession: () => bus.send("sessions.switch"),
      newSession: () => bus.send("sessions.new"),
      previousEditor: () => bus.send("editor.previous"),
    },
    { readOnly: d.readOnly, fileOpen: d.active !== null, running: d.running },
  );
  const toggle = (pane: Pane) => (pane === "preview" ? keyActions.togglePreview() : layout.toggle(pane));
  return { commands, toggle, terminalPane };
}
