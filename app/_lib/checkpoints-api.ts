"use client";
// The IDE's calls for checkpoints, rewind and the review of the agent's changes (issue #27's
// procedures: checkpoints.list/diff/acceptHunk/revertHunk/restore, turns.rewind/unrewind), typed
// as the components use them, in one place so they do not depend on router names.
import { useMemo } from "react";
import { useTRPCClient } from "./trpc";

export type FileChangeKind = "restore" | "delete" | "recreate";

export interface RestoreResult {
  changes: Array<{ path: string; change: FileChangeKind; added: number; removed: number }>;
  /** Files the person edited after the checkpoint, left as they are (keepUserEdits). */
  kept: string[];
  /** Set when it was done (not a dry run): restoring to it undoes this restore. */
  undoCheckpointId?: string;
  /** Files among `changes` that could not be restored, with why (Undo still undoes the rest). */
  failed?: Array<{ path: string; reason: string }>;
  /** The runner's answer was lost: what it changed is not known, and Undo puts every file back. */
  unknown?: string;
}

export interface RewindResult {
  rewindId?: string;
  /** Turns that become (or would become) rewound. */
  turnIds: string[];
  files?: RestoreResult;
  /** The chosen turn's user message, for the composer. */
  text: string;
}

export type HunkState = "open" | "accepted" | "reverted";

export interface AgentHunk {
  id: string;
  header: string;
  /** Each starts with " ", "+" or "-". */
  lines: string[];
  state: HunkState;
}

export interface AgentFile {
  path: string;
  status: "added" | "modified" | "deleted";
  binary: boolean;
  hunks: AgentHunk[];
}

export interface RewindInput {
  sessionId: string;
  turnId: string;
  conversation: boolean;
  files: boolean;
  dryRun: boolean;
  keepUserEdits?: boolean;
}

export interface CheckpointsApi {
  diff(sessionId: string, turnId?: string): Promise<{ files: AgentFile[] }>;
  acceptHunk(sessionId: string, turnId: string | undefined, path: string, hunkId: string): Promise<unknown>;
  revertHunk(sessionId: string, turnId: string | undefined, path: string, hunkId: string): Promise<{ path: string }>;
  /** Files back to before `turnId`; `dryRun`: only what would change. */
  restoreTurn(sessionId: string, turnId: string, dryRun: boolean, keepUserEdits: boolean): Promise<RestoreResult>;
  /** Files back to a checkpoint (a restore's undoCheckpointId undoes that restore). */
  restoreTo(sessionId: string, checkpointId: string): Promise<RestoreResult>;
  rewind(input: RewindInput): Promise<RewindResult>;
  unrewind(sessionId: string, rewindId: string): Promise<unknown>;
}

export function useCheckpointsApi(): CheckpointsApi {
  const client = useTRPCClient();
  return useMemo(() => build(client), [client]);
}

/** The query key of a diff, so a view can be read again when the session says something changed. */
export const diffKey = (sessionId: string, turnId?: string) =>
  ["agent-changes", sessionId, turnId ?? "session"] as const;

function build(client: ReturnType<typeof useTRPCClient>): CheckpointsApi {
  const opt = (turnId?: string) => (turnId ? { turnId } : {});
  return {
    diff: (sessionId, turnId) => client.checkpoints.diff.query({ sessionId, ...opt(turnId) }),
    acceptHunk: (sessionId, turnId, path, hunkId) =>
      client.checkpoints.acceptHunk.mutate({ sessionId, ...opt(turnId), path, hunkId }),
    revertHunk: (sessionId, turnId, path, hunkId) =>
      client.checkpoints.revertHunk.mutate({ sessionId, ...opt(turnId), path, hunkId }),
    restoreTurn: (sessionId, turnId, dryRun, keepUserEdits) =>
      client.checkpoints.restore.mutate({ sessionId, turnId, dryRun, keepUserEdits }),
    restoreTo: (sessionId, checkpointId) =>
      client.checkpoints.restore.mutate({ sessionId, checkpointId, dryRun: false }),
    rewind: (input) => client.turns.rewind.mutate(input),
    unrewind: (sessionId, rewindId) => client.turns.unrewind.mutate({ sessionId, rewindId }),
  };
}
