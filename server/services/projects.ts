// Projects: the pieces of work of an org (a name, and where the files come from: empty, a git
// repository, an uploaded archive). Each person who works on one gets a workspace of their own
// (services/placement.ts) and every session of theirs in the project works in it. Every org has
// a "Default" project; the local owner's workspace of it is the local runner's own folder
// (./.quiver/workspace), and sessions made before projects are attached to their owner's
// workspace of it, so nothing anyone had is lost. Deleting a project removes its sessions and
// its workspaces' folders from their runners; a member's delete is refused, in the same
// transaction as the delete, while anyone else works in it (`deleteRows`).
import { TRPCError } from "@trpc/server";
import type { Db, DbProvider } from "../db";
import { WORKSPACE_DELETE_OP, type WorkspaceSource } from "../protocol/workspace-ops";
import type { Placement, RunnerOps } from "./placement";
import { isLive } from "./runners";
import { workspaceDeleteChores } from "./runner-chores";
import type { Actor } from "./types";

export const DEFAULT_PROJECT = "Default";

/** What "New project" asks for; the git and archive kinds are served by the runner's source handlers. */
export type ProjectSource =
  { kind: "empty" } | { kind: "git"; url: string; branch?: string } | { kind: "archive"; name: string };

export interface ProjectSummary {
  id: string;
  name: string;
  source: ProjectSource;
  runnerLabels: string[];
  createdAt: string;
  sessions: Array<{ id: string; title: string; status: string; updatedAt: string }>;
  /** The asking person's workspace of it, if they have one yet. */
  workspace: { id: string; runnerId: string | null; state: string; error: string | null } | null;
}

interface ProjectRow {
  id: string;
  name: string;
  sourceKind: string;
  gitUrl: string | null;
  gitBranch: string | null;
  archiveName: string | null;
  runnerLabels: unknown;
  createdAt: Date;
}

export function sourceOfRow(p: Pick<ProjectRow, "sourceKind" | "gitUrl" | "gitBranch" | "archiveName">): ProjectSource {
  if (p.sourceKind === "git" && p.gitUrl)
    return { kind: "git", url: p.gitUrl, ...(p.gitBranch ? { branch: p.gitBranch } : {}) };
  if (p.sourceKind === "archive" && p.archiveName) return { kind: "archive", name: p.archiveName };
  return { kind: "empty" };
}

/** The runner's workspace.create source for a project (an archive travels as its upload's id). */
export function workspaceSourceOf(
  p: Pick<ProjectRow, "sourceKind" | "gitUrl" | "gitBranch" | "archiveName">,
): WorkspaceSource {
  const s = sourceOfRow(p);
  if (s.kind === "archive") return { kind: "archive", uploadId: s.name };
  return s;
}

const isUniqueViolation = (err: unknown) => (err as { code?: string })?.code === "P2002";

export interface ProjectServiceDeps {
  placement: Placement;
  ops: RunnerOps;
  /** The local owner: their workspace of their org's Default project is the runner's own folder. */
  localOwner?: { userId: string; orgId: string };
  /** The archive upload `uploadId` when `actor` sent it (services/uploads.ts claim); throws with
   *  the reason otherwise. Absent: archive projects are refused (nothing could check the sender). */
  claimUpload?(uploadId: string, actor: Actor): Promise<unknown>;
  /** Archive uploads kept past their day while a project is made from them: each person's
   *  workspace of it is made from the archive when they first open it (services/uploads.ts). */
  keptUploads?: {
    keep(uploadId: string): Promise<void>;
    release(uploadId: string): Promise<void>;
    kept(): string[];
  };
  /** Sessions whose workspace went: whatever holds them in memory lets go. */
  onWorkspaceRemoved?(workspaceId: string): void;
  /** Before the project's sessions are deleted: their events still waiting to be written are
   *  written (as services/sessions.ts beforeRemove). */
  beforeSessionsRemoved?(sessionIds: string[]): Promise<unknown>;
  /** Which database (default sqlite): on PostgreSQL a delete locks the project's row first. */
  dbProvider?: DbProvider;
  log?: (line: string) => void;
  /** This server instance, with peers: named on the workspaces its project deletes mark. */
  instanceId?: string;
}

const OTHERS_WORK = "Other people work in this project: only the org's owners and admins can delete it.";

export function createProjectService(db: Db, deps: ProjectServiceDeps) {
  const log = deps.log ?? (() => {});

  /**
   * Deletes the project's rows (its sessions and workspaces go with it) in one transaction, only
   * while no turn runs in it and, for a member, while nobody else has a session or workspace in
   * it: checked by the deleting statements themselves (a check before them could be passed by a
   * teammate's new session or a turn just sent, which the delete would then take along). On
   * PostgreSQL the project's row and then its sessions' rows are locked first, so a session or
   * workspace being made in it (whose foreign key check locks the project's row too) or a turn
   * being started (turn-rows' begin locks its session's row) is either committed before the
   * check, and seen, or waits for the delete and then finds nothing. On SQLite the transaction's
   * first write holds the database's write lock to its end (a turn's begin is IMMEDIATE).
   * Answers whether it went.
   */
  async function deleteRows(
    actor: Actor,
    id: string,
    owed: ReturnType<typeof workspaceDeleteChores>,
  ): Promise<boolean> {
    const conditions = {
      sessions: {
        none: {
          OR: [
            { turns: { some: { status: "running" } } },
            ...(actor.role === "member" ? [{ NOT: { ownerId: actor.userId } }] : []),
          ],
        },
      },
      ...(actor.role === "member" ? { workspaces: { none: { NOT: { userId: actor.userId } } } } : {}),
    };
    const results = await db.$transaction([
      // (The query thread runs the Unsafe forms only; the id is a parameter.)
      ...(deps.dbProvider === "postgresql"
        ? [
            db.$executeRawUnsafe(`SELECT 1 FROM "Project" WHERE "id" = $1 FOR UPDATE`, id),
            db.$executeRawUnsafe(`SELECT 1 FROM "Session" WHERE "projectId" = $1 FOR UPDATE`, id),
          ]
        : []),
      db.session.deleteMany({ where: { projectId: id, project: conditions } }),
      // Folders their runners did not delete: deleted when each runner is next reachable
      // (runner-chores.ts), committed or not with the project's delete.
      ...(owed.length ? [db.runnerChore.createMany({ data: owed })] : []),
      db.project.deleteMany({ where: { id, ...conditions } }),
    ]);
    return (results.at(-1) as { count: number }).count === 1;
  }

  const RUNNING = "A turn is running in a session of this project. Stop it first, then delete the project.";
  const runningIn = (projectId: string) => db.turn.count({ where: { status: "running", session: { projectId } } });

  async function findProject(actor: Actor, id: string) {
    const row = await db.project.findFirst({ where: { id, orgId: actor.orgId } });
    if (!row) throw new TRPCError({ code: "NOT_FOUND", message: `No project ${id}.` });
    return row;
  }

  async function defaultProject(orgId: string, createdById: string) {
    const found = await db.project.findUnique({ where: { orgId_name: { orgId, name: DEFAULT_PROJECT } } });
    if (found) return found;
    try {
      return await db.project.create({ data: { orgId, name: DEFAULT_PROJECT, createdById } });
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      return db.project.findUniqueOrThrow({ where: { orgId_name: { orgId, name: DEFAULT_PROJECT } } });
    }
  }

  const isLocalDefault = (project: { orgId: string; name: string }, userId: string) =>
    deps.localOwner?.userId === userId && deps.localOwner.orgId === project.orgId && project.name === DEFAULT_PROJECT;

  /** The person's workspace of the project (the org's Default one when none is named). */
  async function workspaceFor(actor: Pick<Actor, "userId" | "orgId">, projectId?: string) {
    const project = projectId
      ? await findProject(actor as Actor, projectId)
      : await defaultProject(actor.orgId, actor.userId);
    const ws = await deps.placement.ensureWorkspace(project.id, actor.userId, {
      runnerDefault: isLocalDefault(project, actor.userId),
    });
    return { projectId: project.id, workspaceId: ws.id, workspace: ws };
  }

  /** Sessions from before projects, of this person in this org: into their Default workspace. */
  async function attachLegacy(person: { userId: string; orgId: string }): Promise<number> {
    const legacy = await db.session.count({
      where: { orgId: person.orgId, ownerId: person.userId, workspaceId: null },
    });
    if (legacy === 0) return 0;
    const { projectId, workspaceId } = await workspaceFor(person);
    const { count } = await db.session.updateMany({
      where: { orgId: person.orgId, ownerId: person.userId, workspaceId: null },
      data: { projectId, workspaceId },
    });
    if (count)
      log(
        `projects: ${count} earlier session(s) attached to the ${DEFAULT_PROJECT} project's workspace ${workspaceId}`,
      );
    return count;
  }

  /** Lets an archive upload go unless a project is still made from it (one upload may back two). */
  async function releaseIfUnused(uploadId: string): Promise<void> {
    if (!deps.keptUploads) return;
    const users = await db.project.count({ where: { sourceKind: "archive", archiveName: uploadId } });
    if (users === 0) await deps.keptUploads.release(uploadId);
  }

  async function claimArchive(actor: Actor, uploadId: string): Promise<void> {
    if (!deps.claimUpload)
      throw new TRPCError({ code: "PRECONDITION_FAILED", message: "This server takes no archive uploads." });
    try {
      await deps.claimUpload(uploadId, actor);
    } catch (err) {
      const status = (err as { status?: number }).status;
      const code = status === 403 ? "FORBIDDEN" : status === 404 ? "NOT_FOUND" : "BAD_REQUEST";
      throw new TRPCError({
        code,
        message: `The archive upload ${JSON.stringify(uploadId.slice(0, 60))} cannot be used: ${(err as Error).message}. Upload the archive yourself.`,
      });
    }
  }

  return {
    workspaceFor,
    attachLegacy,

    /** At start: uploads kept for projects that are gone (a delete or a create killed midway)
     *  go back to expiring after their day. */
    async releaseOrphanUploads(): Promise<void> {
      for (const id of deps.keptUploads?.kept() ?? []) await releaseIfUnused(id);
    },

    /** At start: the local owner's Default project and workspace exist, their sessions in it. */
    async ensureLocal(): Promise<void> {
      if (!deps.localOwner) return;
      await defaultProject(deps.localOwner.orgId, deps.localOwner.userId);
      await workspaceFor(deps.localOwner);
      await attachLegacy(deps.localOwner);
    },

    /** The workspace a session works in (attaching a session from before projects on the way). */
    async workspaceOfSession(sessionId: string): Promise<string | undefined> {
      const s = await db.session.findUnique({
        where: { id: sessionId },
        select: { workspaceId: true, ownerId: true, orgId: true },
      });
      if (!s) return undefined;
      if (s.workspaceId) return s.workspaceId;
      await attachLegacy({ userId: s.ownerId, orgId: s.orgId });
      return (
        (await db.session.findUnique({ where: { id: sessionId }, select: { workspaceId: true } }))?.workspaceId ??
        undefined
      );
    },

    /** Where a session works: its project, workspace and runner (live, or gone since when). */
    async workspaceStatus(sessionId: string) {
      const workspaceId = await this.workspaceOfSession(sessionId);
      const ws = workspaceId
        ? await db.workspace.findUnique({
            where: { id: workspaceId },
            include: { project: { select: { id: true, name: true } }, runner: true },
          })
        : null;
      if (!ws) return { workspaceId: null, project: null, state: "none", error: null, runner: null };
      const r = ws.runner;
      return {
        workspaceId: ws.id,
        project: ws.project,
        state: ws.state,
        error: ws.error,
        runner: r
          ? {
              id: r.id,
              connected: isLive(r),
              since: (isLive(r) ? r.connectedAt : (r.disconnectedAt ?? r.lastSeenAt))?.toISOString() ?? null,
            }
          : null,
      };
    },

    /** The org's projects (Default first, then by name) with the person's sessions in each. */
    async list(actor: Actor): Promise<ProjectSummary[]> {
      await defaultProject(actor.orgId, actor.userId);
      await attachLegacy(actor);
      const rows = await db.project.findMany({
        where: { orgId: actor.orgId },
        include: {
          sessions: {
            where: { ownerId: actor.userId },
            orderBy: { updatedAt: "desc" },
            take: 200,
            select: { id: true, title: true, status: true, updatedAt: true },
          },
          workspaces: { where: { userId: actor.userId } },
        },
      });
      rows.sort(
        (a, b) =>
          Number(b.name === DEFAULT_PROJECT) - Number(a.name === DEFAULT_PROJECT) || a.name.localeCompare(b.name),
      );
      // One still waiting for a runner may have one by now (placed on the next connect or renewal
      // otherwise): the page says where it is, not that it waits.
      const workspaces = await Promise.all(
        rows.map(async (p) => {
          const ws = p.workspaces[0];
          return ws && workspaceSummary(ws.runnerId ? ws : await deps.placement.placeUnplaced(ws));
        }),
      );
      return rows.map((p, i) => ({
        ...present(p),
        sessions: p.sessions.map((s) => ({ ...s, updatedAt: s.updatedAt.toISOString() })),
        workspace: workspaces[i] ?? null,
      }));
    },

    /** A new project; its creator's workspace is placed at once and its folder made in the background. */
    async create(
      actor: Actor,
      input: { name: string; source: ProjectSource; runnerLabels?: string[] },
    ): Promise<ProjectSummary> {
      const src = input.source;
      // An upload id is a capability only for its sender: anyone else's (guessed, or seen in a
      // shared project) is refused before a project could hand its archive to a runner.
      if (src.kind === "archive") {
        await claimArchive(actor, src.name);
        // Kept before the row exists: a kill between the two leaves a kept upload, released at
        // the next start, never a project whose archive expires under its next person.
        await deps.keptUploads?.keep(src.name).catch((err: Error) => {
          throw new TRPCError({ code: "INTERNAL_SERVER_ERROR", message: `The archive cannot be kept: ${err.message}` });
        });
      }
      let row;
      try {
        row = await db.project.create({
          data: {
            orgId: actor.orgId,
            name: input.name,
            createdById: actor.userId,
            sourceKind: src.kind,
            gitUrl: src.kind === "git" ? src.url : null,
            gitBranch: src.kind === "git" ? (src.branch ?? null) : null,
            archiveName: src.kind === "archive" ? src.name : null,
            runnerLabels: input.runnerLabels ?? [],
          },
        });
      } catch (err) {
        if (src.kind === "archive") await releaseIfUnused(src.name);
        if (isUniqueViolation(err))
          throw new TRPCError({ code: "CONFLICT", message: `There is a project called "${input.name}" already.` });
        throw err;
      }
      const { workspace } = await workspaceFor(actor, row.id);
      void deps.placement
        .prepare(workspace)
        .catch((err) => log(`projects: workspace ${workspace.id} not prepared: ${(err as Error).message}`));
      return {
        ...present(row),
        sessions: [],
        workspace: workspaceSummary(workspace),
      };
    },

    async rename(actor: Actor, id: string, name: string): Promise<void> {
      const row = await findProject(actor, id);
      if (actor.role === "member" && row.createdById !== actor.userId)
        throw new TRPCError({
          code: "FORBIDDEN",
          message: "Only the project's creator or an org admin can rename it.",
        });
      if (row.name === DEFAULT_PROJECT)
        throw new TRPCError({ code: "BAD_REQUEST", message: `The ${DEFAULT_PROJECT} project keeps its name.` });
      try {
        await db.project.update({ where: { id }, data: { name } });
      } catch (err) {
        if (isUniqueViolation(err))
          throw new TRPCError({ code: "CONFLICT", message: `There is a project called "${name}" already.` });
        throw err;
      }
    },

    /** Deletes the project with its sessions, after deleting its workspaces' folders on their
     *  runners. Refused while a turn runs in it; a workspace whose runner is not reachable from
     *  this server is named in the answer: its folder stays on that runner until it is back. */
    async remove(
      actor: Actor,
      id: string,
    ): Promise<{ removed: number; leftBehind: Array<{ workspaceId: string; runnerId: string; reason: string }> }> {
      const row = await findProject(actor, id);
      if (row.name === DEFAULT_PROJECT)
        throw new TRPCError({ code: "BAD_REQUEST", message: `The ${DEFAULT_PROJECT} project cannot be deleted.` });
      if (actor.role === "member" && row.createdById !== actor.userId)
        throw new TRPCError({
          code: "FORBIDDEN",
          message: "Only the project's creator or an org admin can delete it.",
        });
      // Deleting removes every person's sessions and workspace in it: a member who made the
      // project deletes it only while the work in it is all theirs. Another person's session is
      // never a member's to remove (auth/authorize.ts); with others in it, it is the admins' call.
      if (actor.role === "member") {
        const [sessions, workspaces] = await Promise.all([
          db.session.count({ where: { projectId: id, NOT: { ownerId: actor.userId } } }),
          db.workspace.count({ where: { projectId: id, NOT: { userId: actor.userId } } }),
        ]);
        if (sessions + workspaces > 0) throw new TRPCError({ code: "FORBIDDEN", message: OTHERS_WORK });
      }
      // Checked again by the delete itself (deleteRows); here before any folder is removed.
      if (await runningIn(id)) throw new TRPCError({ code: "CONFLICT", message: RUNNING });
      const workspaces = await db.workspace.findMany({ where: { projectId: id } });
      await db.workspace.updateMany({
        where: { projectId: id },
        data: { state: "deleting", deletingBy: deps.instanceId ?? null },
      });
      const leftBehind: Array<{ workspaceId: string; runnerId: string; reason: string }> = [];
      let removed = 0;
      for (const ws of workspaces) {
        deps.onWorkspaceRemoved?.(ws.id);
        if (!ws.runnerId || ws.runnerDefault) continue;
        try {
          const r = await deps.ops.runOn(ws.runnerId, WORKSPACE_DELETE_OP, { workspaceId: ws.id });
          if (!r.ok) throw new Error(r.output);
          removed++;
        } catch (err) {
          leftBehind.push({ workspaceId: ws.id, runnerId: ws.runnerId, reason: (err as Error).message });
        }
      }
      if (deps.beforeSessionsRemoved) {
        const sessions = await db.session.findMany({ where: { projectId: id }, select: { id: true } });
        await deps.beforeSessionsRemoved(sessions.map((s) => s.id));
      }
      // Someone else began working in it, or a turn was sent, since the checks above: it stays.
      const owed = workspaceDeleteChores(leftBehind);
      if (!(await deleteRows(actor, id, owed))) {
        // Its workspaces stay, so their folders are owed nothing (a chore of a workspace that
        // still exists is dropped unrun anyway).
        if (owed.length) await db.runnerChore.deleteMany({ where: { id: { in: owed.map((c) => c.id) } } });
        // The workspaces marked for deletion stay usable: a folder already removed is made again,
        // empty, on next use, rather than its sessions refused as "being deleted" for good.
        await db.workspace.updateMany({
          where: { id: { in: workspaces.map((w) => w.id) }, state: "deleting" },
          data: { state: "creating", error: null, deletingBy: null },
        });
        const gone = removed
          ? `; ${removed} workspace folder(s) in it were already removed and are made again, empty, when next used`
          : "";
        if (await runningIn(id))
          throw new TRPCError({
            code: "CONFLICT",
            message: `${RUNNING} (A turn was sent while it was being deleted, so it stays${gone}.)`,
          });
        if (actor.role === "member")
          throw new TRPCError({
            code: "FORBIDDEN",
            message: `${OTHERS_WORK} (Someone began working in it while it was being deleted, so it stays${gone}.)`,
          });
        throw new TRPCError({ code: "NOT_FOUND", message: `No project ${id}.` });
      }
      if (row.sourceKind === "archive" && row.archiveName) await releaseIfUnused(row.archiveName);
      for (const l of leftBehind)
        log(
          `projects: workspace ${l.workspaceId} of deleted project ${id} stays on runner ${l.runnerId} until it is reachable: ${l.reason}`,
        );
      return {
        removed,
        leftBehind: leftBehind.map((l) => ({ ...l, reason: `${l.reason}; it is removed when that runner is back` })),
      };
    },
  };
}

function present(p: ProjectRow): Omit<ProjectSummary, "sessions" | "workspace"> {
  const labels = Array.isArray(p.runnerLabels)
    ? (p.runnerLabels as unknown[]).filter((l): l is string => typeof l === "string")
    : [];
  return { id: p.id, name: p.name, source: sourceOfRow(p), runnerLabels: labels, createdAt: p.createdAt.toISOString() };
}

export type ProjectService = ReturnType<typeof createProjectService>;

function workspaceSummary(ws: { id: string; runnerId: string | null; state: string; error: string | null }) {
  return { id: ws.id, runnerId: ws.runnerId, state: ws.state, error: ws.error };
}
