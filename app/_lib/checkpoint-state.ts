// The part of the chat's state that follows checkpoints, rewinds and reviews (issue #27): which
// turns are rewound (by the rewinds not undone, so a replay after a reload shows the same), which
// turns changed files (their "Review changes" and "Undo" links), and a counter that bumps at
// every restore or review so open review views read the agent's changes again. A pure function
// of the events, like session-state.ts, which calls it.

export interface CheckpointState {
  /** Conversation rewinds by id: the turns each covers, and whether it was undone since. */
  rewinds: Record<string, { turnIds: string[]; undone: boolean }>;
  /** Files each finished turn changed (its "after" checkpoint), by turn id. */
  changed: Record<string, number>;
  /** Bumps at every checkpoint, restore and hunk review. */
  version: number;
}

/** The session events of issue #27's contract, as this reducer reads them. */
export type CheckpointEvent =
  | {
      type: "checkpoint.created";
      checkpointId: string;
      turnId: string;
      phase: "before" | "after" | "restore-undo";
      filesChanged: number;
    }
  | { type: "turn.rewound"; rewindId: string; turnIds: string[] }
  | { type: "turn.unrewound"; rewindId: string; turnIds: string[] }
  | { type: "checkpoint.restored"; checkpointId: string; undoCheckpointId: string; paths: string[] }
  | { type: "hunk.reviewed"; turnId?: string; path: string; hunkId: string; state: "accepted" | "reverted" };

export const emptyCheckpointState = (): CheckpointState => ({ rewinds: {}, changed: {}, version: 0 });

/** Applies one checkpoint event; anything else leaves the state as it is (the same object). */
export function applyCheckpointEvent(c: CheckpointState, ev: { type: string }): CheckpointState {
  const e = ev as CheckpointEvent;
  switch (e.type) {
    case "checkpoint.created":
      if (e.phase !== "after") return { ...c, version: c.version + 1 };
      return { ...c, version: c.version + 1, changed: { ...c.changed, [e.turnId]: e.filesChanged } };
    case "turn.rewound":
      return { ...c, rewinds: { ...c.rewinds, [e.rewindId]: { turnIds: e.turnIds, undone: false } } };
    case "turn.unrewound":
      // Known by its own turn ids too: the rewind itself may be in turns not loaded yet.
      return {
        ...c,
        rewinds: { ...c.rewinds, [e.rewindId]: { turnIds: c.rewinds[e.rewindId]?.turnIds ?? e.turnIds, undone: true } },
      };
    case "checkpoint.restored":
    case "hunk.reviewed":
      return { ...c, version: c.version + 1 };
    default:
      return c;
  }
}

/** `later` (the loaded turns) over `before` (turns read afterwards, put in front): an undo in the
 *  later turns wins over its rewind in the earlier ones. */
export function mergeCheckpointState(before: CheckpointState, later: CheckpointState): CheckpointState {
  const rewinds = { ...before.rewinds };
  for (const [id, r] of Object.entries(later.rewinds))
    rewinds[id] = { turnIds: before.rewinds[id]?.turnIds ?? r.turnIds, undone: r.undone };
  return { rewinds, changed: { ...before.changed, ...later.changed }, version: later.version + before.version };
}

/** The turns now rewound: in some rewind that was not undone. */
export function rewoundTurns(c: CheckpointState): Set<string> {
  const out = new Set<string>();
  for (const r of Object.values(c.rewinds)) if (!r.undone) for (const t of r.turnIds) out.add(t);
  return out;
}
