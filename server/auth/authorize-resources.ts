// What authorize() needs to know about a resource named by id: the org it is in and, for
// anything bound to a session (the session, an approval card, a share link), the session and its
// creator. One small query per call (the id and two columns), as the access check before it did.
// A session's, the one every send and every event subscription asks for, is plain SQL when the
// caller names the database's provider: Prisma compiles each findUnique in WebAssembly on the
// query thread (about 2 ms of CPU, against 0.3 for raw SQL), a sixth of a 120-token turn's
// relay cost on that thread (bench/token-latency).
import type { Db, DbProvider } from "../db";
import type { Resource, Subject } from "./authorize";

export type ResourceRef =
  | { kind: "none" }
  /** The org the person is working in (their active org). */
  | { kind: "activeOrg" }
  | { kind: "org"; id: string }
  | { kind: "session"; id: string }
  | { kind: "approval"; id: string }
  | { kind: "shareLink"; id: string };

const sessionColumns = { id: true, orgId: true, ownerId: true } as const;
const SESSION_ROW = {
  sqlite: `SELECT "id","orgId","ownerId" FROM "Session" WHERE "id" = ?`,
  postgresql: `SELECT "id","orgId","ownerId" FROM "Session" WHERE "id" = $1`,
} as const;
type SessionRow = { id: string; orgId: string; ownerId: string };

async function sessionRow(db: Db, id: string, provider?: DbProvider): Promise<SessionRow | null> {
  if (!provider) return db.session.findUnique({ where: { id }, select: sessionColumns });
  const rows = (await db.$queryRawUnsafe(SESSION_ROW[provider], id)) as SessionRow[];
  return rows[0] ?? null;
}
const asSession = (s: { id: string; orgId: string; ownerId: string }): Resource => ({
  kind: "session",
  sessionId: s.id,
  orgId: s.orgId,
  creatorId: s.ownerId,
});

/** Resolves `ref` for `subject`: only a person's requests read the database (a viewer is
 *  judged by its link's session id alone; nobody is refused whatever the resource).
 *  `provider`: the database's, for a session's row through plain SQL (see the header). */
export async function loadResource(
  db: Db,
  subject: Subject,
  ref: ResourceRef,
  provider?: DbProvider,
): Promise<Resource> {
  if (ref.kind === "none") return ref;
  if (subject.kind !== "person") {
    if (ref.kind === "session") return { kind: "session", sessionId: ref.id, orgId: "", creatorId: "" };
    return ref.kind === "approval" || ref.kind === "shareLink"
      ? { kind: "session", sessionId: "", orgId: "", creatorId: "" }
      : { kind: "org", orgId: "" };
  }
  switch (ref.kind) {
    case "activeOrg":
      return { kind: "org", orgId: subject.actor.orgId };
    case "org":
      return { kind: "org", orgId: ref.id };
    case "session": {
      const s = await sessionRow(db, ref.id, provider);
      return s ? asSession(s) : { kind: "missing", message: `No session ${ref.id}.` };
    }
    case "approval": {
      const a = await db.approval.findUnique({
        where: { id: ref.id },
        select: { session: { select: sessionColumns } },
      });
      return a ? asSession(a.session) : { kind: "missing", message: "No such approval." };
    }
    case "shareLink": {
      const l = await db.shareLink.findUnique({
        where: { id: ref.id },
        select: { session: { select: sessionColumns } },
      });
      return l ? asSession(l.session) : { kind: "missing", message: `No share link ${ref.id}.` };
    }
  }
}
