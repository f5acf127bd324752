"use client";
// The open file's diagnostics from the workspace's language server (files.diagnostics), the same
// the agent gets after its edits: asked for TS/JS files only, again every few seconds, as Monaco markers (code-editor.tsx sets them on the file's model).
import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "../../_lib/trpc";
import type { DiagnosticEntry } from "../../../server/protocol/diagnostics";

const CHECKED = /\.(ts|tsx|mts|cts|js|jsx|mjs|cjs)$/i;

export interface FileMarkers {
  path: string;
  diagnostics: DiagnosticEntry[];
}

export function useFileDiagnostics(sessionId: string, path: string | null): FileMarkers | null {
  const trpc = useTRPC();
  const enabled = !!path && CHECKED.test(path);
  const q = useQuery(
    trpc.files.diagnostics.queryOptions(
      { sessionId, path: path ?? "-" },
      { enabled, retry: false, refetchInterval: 5_000, staleTime: 1_000 },
    ),
  );
  if (!enabled || !q.data || !q.data.ready) return null;
  return { path: q.data.path, diagnostics: q.data.diagnostics };
}
