// Session modes as stored: Session.mode, bounded by Org.forbiddenModes (policy/modes.ts says what
// each mode lets through). setMode is the person's switch (tRPC sessions.setMode, and accepting
// a plan); forbidModes is the org admins' setting; modeFor is what the pipeline judges each
// dispatch in. A mode the org forbids after a session chose it falls back to ask at the session's
// next dispatch: the row is moved back and every open tab told (a `session.mode` event).
// modeFor reads through plain SQL when the caller names the provider: the engine asks before
// every model request, and Prisma compiles each findUnique in WebAssembly on the query thread
// (about 2 ms of CPU, against 0.3 for raw SQL: bench/token-latency).
import type { Db, DbProvider } from "../db";
import type { SessionEventBody } from "../protocol/events";
import {
  DEFAULT_MODE,
  EXIT_PLAN_MODE,
  ForbiddenModes,
  MODE_LABELS,
  Mode,
  effectiveMode,
  parseForbidden,
} from "../policy/modes";
import type { Actor } from "./types";

export class ModeError extends Error {
  constructor(
    message: string,
    readonly code: "BAD_REQUEST" | "FORBIDDEN" | "NOT_FOUND" | "CONFLICT",
  ) {
    super(message);
    this.name = "ModeError";
  }
}

export type Emit = (sessionId: string, event: SessionEventBody) => Promise<void> | void;

export interface SessionModeInfo {
  mode: Mode;
  forbidden: Mode[];
}

async function orgForbidden(db: Db, orgId: string): Promise<Mode[]> {
  const org = await db.org.findUnique({ where: { id: orgId }, select: { forbiddenModes: true } });
  return parseForbidden(org?.forbiddenModes);
}

const MODE_ROW = {
  sqlite: `SELECT s."mode", o."forbiddenModes" FROM "Session" s JOIN "Org" o ON o."id" = s."orgId" WHERE s."id" = ?`,
  postgresql: `SELECT s."mode", o."forbiddenModes" FROM "Session" s JOIN "Org" o ON o."id" = s."orgId" WHERE s."id" = $1`,
} as const;

/** The session's mode and its org's forbidden modes (SQLite hands the Json column over as its text). */
async function modeRow(
  db: Db,
  sessionId: string,
  provider?: DbProvider,
): Promise<{ mode: string; forbiddenModes: unknown } | undefined> {
  if (!provider) {
    const s = await db.session.findUnique({
      where: { id: sessionId },
      select: { mode: true, org: { select: { forbiddenModes: true } } },
    });
    return s ? { mode: s.mode, forbiddenModes: s.org.forbiddenModes } : undefined;
  }
  const [row] = (await db.$queryRawUnsafe(MODE_ROW[provider], sessionId)) as {
    mode: string;
    forbiddenModes: unknown;
  }[];
  // SQLite's Json column comes as its text: parseForbidden reads it (and fails closed on garbage).
  return row;
}

/** The mode the session's next call is judged in. With `emit` (a dispatch), a forbidden stored
 *  mode is also moved back to ask and the tabs told; without it (a read), nothing is written.
 *  `provider`: the database's, for the read through plain SQL (see the header). */
export async function modeFor(
  db: Db,
  sessionId: string,
  emit?: Emit,
  provider?: DbProvider,
): Promise<SessionModeInfo | undefined> {
  const s = await modeRow(db, sessionId, provider);
  return s ? settleMode(db, sessionId, s, emit) : undefined;
}

/** modeFor from the session's stored mode and its org's forbidden modes, already read. */
export async function settleMode(
  db: Db,
  sessionId: string,
  s: { mode: string; forbiddenModes: unknown },
  emit?: Emit,
): Promise<SessionModeInfo> {
  const forbidden = parseForbidden(s.forbiddenModes);
  const mode = effectiveMode(s.mode, forbidden);
  if (mode !== s.mode && emit) {
    // Only the first dispatch to see it moves the row and tells the tabs.
    const moved = await db.session.updateMany({ where: { id: sessionId, mode: s.mode }, data: { mode } });
    if (moved.count > 0) {
      const label = MODE_LABELS[Mode.safeParse(s.mode).success ? (s.mode as Mode) : DEFAULT_MODE];
      await emit(sessionId, {
        type: "session.mode",
        mode,
        previous: s.mode,
        reason: `${label} mode is forbidden by the org; back to Ask.`,
      });
    }
  }
  return { mode, forbidden };
}

/** The person's switch. `sessionId` is already authorized for `actor` (the router's access row). */
export async function setMode(
  db: Db,
  actor: Actor | { userId: string | null },
  sessionId: string,
  mode: Mode,
  emit?: Emit,
): Promise<SessionModeInfo> {
  const s = await db.session.findUnique({ where: { id: sessionId }, select: { mode: true, orgId: true } });
  if (!s) throw new ModeError("No such session.", "NOT_FOUND");
  const forbidden = await orgForbidden(db, s.orgId);
  if (forbidden.includes(mode)) {
    throw new ModeError(
      `${MODE_LABELS[mode]} mode is forbidden by your org's policy; an org admin can allow it in Settings → Policy.`,
      "FORBIDDEN",
    );
  }
  if (s.mode !== mode) {
    await db.session.update({ where: { id: sessionId }, data: { mode } });
    await db.auditEvent.create({
      data: {
        orgId: s.orgId,
        sessionId,
        actorId: actor.userId,
        action: "session.mode",
        target: `session:${sessionId}`,
        detail: { mode, previous: s.mode },
      },
    });
    await emit?.(sessionId, { type: "session.mode", mode, previous: s.mode });
  }
  return { mode, forbidden };
}

/** The org's forbidden modes (every member may read them: the chip greys them out). */
export function forbiddenModes(db: Db, actor: Actor): Promise<Mode[]> {
  return orgForbidden(db, actor.orgId);
}

/** Admins and owners only; sessions in a newly forbidden mode fall back at their next call. */
export async function forbidModes(db: Db, actor: Actor, modes: unknown): Promise<Mode[]> {
  if (actor.role === "member")
    throw new ModeError("Only org admins and owners can change which modes are allowed.", "FORBIDDEN");
  const parsed = ForbiddenModes.safeParse(modes);
  if (!parsed.success)
    throw new ModeError(
      "Forbidden modes: a list of plan, accept-edits and auto (ask cannot be forbidden).",
      "BAD_REQUEST",
    );
  const list = parseForbidden(parsed.data);
  const before = await orgForbidden(db, actor.orgId);
  await db.$transaction([
    db.org.update({ where: { id: actor.orgId }, data: { forbiddenModes: list } }),
    db.auditEvent.create({
      data: {
        orgId: actor.orgId,
        actorId: actor.userId,
        action: "policy.modes",
        target: `org:${actor.orgId}`,
        detail: { forbidden: list, previous: before },
      },
    }),
  ]);
  return list;
}

/**
 * "Accept and implement" on exit_plan_mode's card: the session moves to `mode` first (refused if
 * the org forbids it), then the card is approved once, so the call's result and every later
 * call of the turn are judged in the new mode.
 */
export async function acceptPlan(
  db: Db,
  approve: (approvalId: string) => Promise<unknown>,
  actor: Actor,
  sessionId: string,
  approvalId: string,
  mode: Mode,
  emit?: Emit,
): Promise<SessionModeInfo> {
  if (mode === "plan")
    throw new ModeError("Accepting a plan leaves plan mode: choose Ask, Accept edits or Auto.", "BAD_REQUEST");
  const row = await db.approval.findUnique({
    where: { id: approvalId },
    select: { sessionId: true, status: true, toolCall: { select: { name: true } } },
  });
  if (!row || row.sessionId !== sessionId || row.toolCall.name !== EXIT_PLAN_MODE)
    throw new ModeError("No such plan card.", "NOT_FOUND");
  if (row.status !== "pending") throw new ModeError("This plan was already answered.", "CONFLICT");
  const info = await setMode(db, actor, sessionId, mode, emit);
  await approve(approvalId);
  return info;
}
