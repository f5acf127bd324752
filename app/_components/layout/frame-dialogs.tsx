"use client";
// The frame's dialogs over the panes: quick open (files, ">" commands, ":" a line) and Share.
// Opened through a handle, in the same event as the key or button: text typed right after
// Ctrl+P goes into the box, not to what had the focus before.
import { useImperativeHandle, useState } from "react";
import { QuickOpen } from "../editor/quick-open";
import type { Command } from "../editor/palette";
import { ShareDialog } from "../share/share-dialog";
import type { Workspace } from "./use-workspace";

export interface FrameDialogsHandle {
  openQuick(initial: string): void;
  share(): void;
}

interface Props {
  sessionId: string;
  ws: Workspace;
  commands: Command[];
  ref: React.Ref<FrameDialogsHandle>;
}

export function FrameDialogs({ sessionId, ws, commands, ref }: Props) {
  // What the quick-open box starts with; null: closed.
  const [quick, setQuick] = useState<string | null>(null);
  const [sharing, setSharing] = useState(false);
  useImperativeHandle(ref, () => ({ openQuick: setQuick, share: () => setSharing(true) }), []);
  const { files, active } = ws;
  return (
    <>
      {quick !== null && (
        <QuickOpen
          paths={ws.filePaths ?? []}
          recent={files.recent}
          active={active}
          findIn={ws.tree.partial ? sessionId : undefined}
          listing={ws.filePaths === undefined}
          commands={commands}
          initial={quick}
          onOpen={ws.openFile}
          onGoToLine={active ? ws.goToLine : undefined}
          onClose={() => setQuick(null)}
        />
      )}
      {sharing && <ShareDialog sessionId={sessionId} onClose={() => setSharing(false)} />}
    </>
  );
}
