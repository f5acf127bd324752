"use client";
// Files from the person's computer into the workspace: chosen with Upload Files… in the tree's
// menu, or dropped on the tree (into the folder under the pointer, a file's own folder, or the
// root). One at a time through the runner, exact bytes; a name already taken asks before it is
// replaced, and a file past the size limit is refused before it is read.
import { useState, type DragEvent } from "react";
import { useMutation } from "@tanstack/react-query";
import { useTRPC } from "../../_lib/trpc";
import { PERSON_FILE_LIMITS } from "../../../server/protocol/person-file-ops";
import { base64Of, sizeLabel } from "../../_lib/bytes";
import { markedName } from "../../_lib/visible-text";

/** Where a file dropped on (or uploaded from the menu of) a row goes. */
export function folderFor(row: { path: string; type: string } | null): string {
  if (!row) return "";
  if (row.type === "dir") return row.path;
  const cut = row.path.lastIndexOf("/");
  return cut < 0 ? "" : row.path.slice(0, cut);
}

const base64OfFile = async (file: File) => base64Of(new Uint8Array(await file.arrayBuffer()));

export function useUpload(
  sessionId: string,
  report: (message: string | undefined) => void,
  onUploaded: (paths: string[]) => void,
) {
  const trpc = useTRPC();
  const send = useMutation(trpc.files.upload.mutationOptions());
  const [busy, setBusy] = useState<string>();

  const upload = async (folder: string, files: File[]) => {
    report(undefined);
    const done: string[] = [];
    const refused: string[] = [];
    for (const file of files) {
      const path = folder ? `${folder}/${file.name}` : file.name;
      if (file.size > PERSON_FILE_LIMITS.maxUploadBytes) {
        refused.push(
          `${file.name} is ${sizeLabel(file.size)}; files up to ${sizeLabel(PERSON_FILE_LIMITS.maxUploadBytes)} can be uploaded`,
        );
        continue;
      }
      setBusy(path);
      try {
        const base64 = await base64OfFile(file);
        try {
          await send.mutateAsync({ sessionId, path, base64 });
        } catch (err) {
          if ((err as { data?: { code?: string } }).data?.code !== "CONFLICT") throw err;
          if (!confirm(`${markedName(path)} already exists. Replace it?`)) continue;
          await send.mutateAsync({ sessionId, path, base64, overwrite: true });
        }
        done.push(path);
      } catch (err) {
        refused.push(`${file.name}: ${(err as Error).message}`);
      }
    }
    setBusy(undefined);
    if (refused.length) report(`Not uploaded: ${refused.join("; ")}`);
    if (done.length) onUploaded(done);
  };

  /** The browser's file chooser, its files uploaded into `folder`. */
  const choose = (folder: string) => {
    const input = Object.assign(document.createElement("input"), { type: "file", multiple: true });
    input.onchange = () => void upload(folder, [...(input.files ?? [])]);
    input.click();
  };

  return { upload, choose, busy };
}

/** Drag and drop of files from the computer onto the tree; `target` is the folder shown as the drop's destination. */
export function useTreeDrop(enabled: boolean, onDrop: (folder: string, files: File[]) => void) {
  const [target, setTarget] = useState<string | null>(null);
  const folderUnder = (e: DragEvent) => {
    const row = (e.target as Element).closest?.("[data-path]");
    return folderFor(
      row ? { path: row.getAttribute("data-path")!, type: row.getAttribute("data-type") ?? "file" } : null,
    );
  };
  const carriesFiles = (e: DragEvent) => [...e.dataTransfer.types].includes("Files");
  if (!enabled) return { target: null, handlers: {} };
  return {
    target,
    handlers: {
      onDragOver: (e: DragEvent) => {
        if (!carriesFiles(e)) return;
        e.preventDefault();
        e.dataTransfer.dropEffect = "copy";
        setTarget(folderUnder(e));
      },
      onDragLeave: (e: DragEvent) => {
        if (!(e.currentTarget as Element).contains(e.relatedTarget as Node | null)) setTarget(null);
      },
      onDrop: (e: DragEvent) => {
        if (!carriesFiles(e)) return;
        e.preventDefault();
        setTarget(null);
        onDrop(folderUnder(e), [...e.dataTransfer.files]);
      },
    },
  };
}
