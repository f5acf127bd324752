// Rewinding a session's conversation (issue 27): turn T and every later turn not already
// rewound are marked with the rewind's id (Turn.rewindId). Their messages stay stored and their
// events stay in the stream (replay shows them, marked by turn.rewound), but the conversation the
// next model request is built from leaves them out (db/turn-rows conversation()). Undone by
// unrewind. With `files`, the workspace is restored to before T as checkpoints.restore does.
// Refused while a turn runs: the running turn would write into a history being cut.
// A rewind's rows (and an undo's) change in one transaction, and its event follows; a server
// killed in between leaves rows the stream never heard of, so the next start publishes the
// missing turn.rewound / turn.unrewound (recoverRewinds): the dimmed turns in the chat are then
// always the ones the model's context leaves out.
import type { Db } from "../db";
import { rowId } from "../db/row-id";
import type { SessionEventBody } from "../protocol/events";
import { CheckpointError, type CheckpointService, type RestoreResult } from "./checkpoints";

export interface RewindRequest {
  sessionId: string;
  turnId: string;
  conversation: boolean;
  files: boolean;
  dryRun: boolean;
  keepUserEdits?: boolean;
}

export interface RewindResult {
  rewindId?: string;
  turnIds: string[];
  files?: RestoreResult;
  text: string;
}

export interface RewindService {
  rewind(req: RewindRequest): Promise<RewindResult>;
  unrewind(sessionId: string, rewindId: string): Promise<{ ok: true }>;
  /** Publishes the events a stopped server left unpublished, for changes committed before
   *  `before` (and, with `since`, not before it: a periodic sweep reads only its window). */
  recover(before: Date, since?: Date): Promise<number>;
}

export function createRewindService(deps: {
  db: Db;
  checkpoints: CheckpointService;
  publish(sessionId: string, body: SessionEventBody): Promise<unknown>;
}): RewindService {
  const { db, checkpoints } = deps;

  /** The text of turn T's user message (what the composer gets back). */
  async function userText(turnId: string): Promise<string> {
    const row = await db.message.findFirst({
      where: { turnId, role: "user" },
      orderBy: { position: "asc" },
      select: { content: true },
    });
    const blocks = Array.isArray(row?.content) ? (row.content as { type?: string; text?: string }[]) : [];
    return blocks
      .filter((b) => b.type === "text" && typeof b.text === "string")
      .map((b) => b.text)
      .join("\n");
  }

  /** The rewind ids the session's stored events of `type` name. */
  async function told(sessionId: string, type: "turn.rewound" | "turn.unrewound"): Promise<Set<string>> {
    const rows = await db.sessionEvent.findMany({ where: { sessionId, type }, select: { payload: true } });
    return new Set(rows.map((r) => (r.payload as { rewindId?: string } | null)?.rewindId ?? ""));
  }

  return {
    async rewind(req) {
      const { sessionId, turnId } = req;
      if (!req.conversation && !req.files)
        throw new CheckpointError("BAD_REQUEST", "Choose what to rewind: the conversation, the files, or both.");
      const turn = await db.turn.findFirst({
        where: { id: turnId, sessionId },
        select: { id: true, startedAt: true, rewindId: true },
      });
      if (!turn) throw new CheckpointError("NOT_FOUND", `No turn ${turnId} in this session.`);
      if (req.conversation && turn.rewindId)
        throw new CheckpointError("CONFLICT", "That turn is already rewound; undo that rewind first.");
      if (!req.dryRun) await checkpoints.assertIdle(sessionId, "the conversation and files cannot be rewound");
      const later = await db.turn.findMany({
        where: { sessionId, startedAt: { gte: turn.startedAt }, rewindId: null },
        orderBy: { startedAt: "asc" },
        select: { id: true },
      });
      const turnIds = req.conversation ? later.map((t) => t.id) : [];
      const text = await userText(turnId);
      const files = req.files
        ? await checkpoints.restore({ sessionId, turnId, dryRun: req.dryRun, keepUserEdits: req.keepUserEdits })
        : undefined;
      if (req.dryRun || !req.conversation) return { turnIds, text, ...(files ? { files } : {}) };
      // A batch, not an interactive transaction: the query thread runs only these.
      const row = { id: rowId() };
      await db.$transaction([
        db.rewind.create({ data: { id: row.id, sessionId, turnId, turnIds } }),
        db.turn.updateMany({ where: { id: { in: turnIds }, sessionId, rewindId: null }, data: { rewindId: row.id } }),
      ]);
      await deps.publish(sessionId, { type: "turn.rewound", rewindId: row.id, turnIds });
      return { rewindId: row.id, turnIds, text, ...(files ? { files } : {}) };
    },

    async unrewind(sessionId, rewindId) {
      const row = await db.rewind.findFirst({ where: { id: rewindId, sessionId } });
      if (!row) throw new CheckpointError("NOT_FOUND", `No rewind ${rewindId} in this session.`);
      const turnIds = (row.turnIds as string[]) ?? [];
      if (row.undoneAt) {
        // Undone before a stop lost its event: the chat still shows the turns rewound.
        if (!(await told(sessionId, "turn.unrewound")).has(rewindId))
          await deps.publish(sessionId, { type: "turn.unrewound", rewindId, turnIds });
        return { ok: true };
      }
      await checkpoints.assertIdle(sessionId, "a rewind cannot be undone");
      await db.$transaction([
        db.turn.updateMany({ where: { sessionId, rewindId }, data: { rewindId: null } }),
        db.rewind.update({ where: { id: rewindId }, data: { undoneAt: new Date() } }),
      ]);
      await deps.publish(sessionId, { type: "turn.unrewound", rewindId, turnIds });
      return { ok: true };
    },

    async recover(before, since) {
      const rows = await db.rewind.findMany({
        where: since
          ? { OR: [{ createdAt: { gte: since, lt: before } }, { undoneAt: { gte: since, lt: before } }] }
          : { createdAt: { lt: before } },
        orderBy: { createdAt: "asc" },
        select: { id: true, sessionId: true, turnIds: true, undoneAt: true },
      });
      let published = 0;
      for (const sessionId of new Set(rows.map((r) => r.sessionId))) {
        const [rewound, unrewound] = await Promise.all([
          told(sessionId, "turn.rewound"),
          told(sessionId, "turn.unrewound"),
        ]);
        for (const row of rows.filter((r) => r.sessionId === sessionId)) {
          const turnIds = (row.turnIds as string[]) ?? [];
          if (!rewound.has(row.id)) {
            await deps.publish(sessionId, { type: "turn.rewound", rewindId: row.id, turnIds });
            published++;
          }
          if (row.undoneAt && row.undoneAt < before && !unrewound.has(row.id)) {
            await deps.publish(sessionId, { type: "turn.unrewound", rewindId: row.id, turnIds });
            published++;
          }
        }
      }
      return published;
    },
  };
}
