// Sessions: the unit a person works in (a workspace on a runner, a chat with the agent).
import { TRPCError } from "@trpc/server";
import type { Db } from "../db";
import type { Actor } from "./types";

export interface SessionSummary {
  id: string;
  title: string;
  status: string;
  provider: string | null;
  model: string | null;
  createdAt: string;
  updatedAt: string;
}

function summarize(s: { id: string; title: string; status: string; provider: string | null; model: string | null; createdAt: Date; updatedAt: Date }): SessionSummary {
  return {
    id: s.id,
    title: s.title,
    status: s.status,
    provider: s.provider,
    model: s.model,
    createdAt: s.createdAt.toISOString(),
    updatedAt: s.updatedAt.toISOString(),
  };
}

export function createSessionService(db: Db) {
  return {
    async list(actor: Actor): Promise<SessionSummary[]> {
      const rows = await db.session.findMany({
        where: { orgId: actor.orgId, ownerId: actor.userId },
        orderBy: { updatedAt: "desc" },
        take: 200,
      });
      return rows.map(summarize);
    },

    async create(actor: Actor, input: { title?: string; workspace?: string }): Promise<SessionSummary> {
      const title = input.title ?? `Session ${new Date().toISOString().slice(0, 16).replace("T", " ")}`;
      const row = await db.session.create({
        data: { title, ownerId: actor.userId, orgId: actor.orgId, workspace: input.workspace ?? "" },
      });
      return summarize(row);
    },

    async get(actor: Actor, id: string): Promise<SessionSummary> {
      const row = await db.session.findFirst({ where: { id, orgId: actor.orgId } });
      if (!row) throw new TRPCError({ code: "NOT_FOUND", message: `No session ${id}.` });
      return summarize(row);
    },

    /** A session by id alone, for a viewer whose share link was checked already. */
    async getShared(id: string): Promise<SessionSummary> {
      const row = await db.session.findUnique({ where: { id } });
      if (!row) throw new TRPCError({ code: "NOT_FOUND", message: `No session ${id}.` });
      return summarize(row);
    },

    /** Access check shared by routers and sockets: the id alone is read (a whole row costs
     *  Prisma about twice the CPU, and every send and subscribe asks). */
    async assertAccess(actor: Actor, id: string): Promise<void> {
      const row = await db.session.findFirst({ where: { id, orgId: actor.orgId }, select: { id: true } });
      if (!row) throw new TRPCError({ code: "NOT_FOUND", message: `No session ${id}.` });
    },
  };
}

export type SessionService = ReturnType<typeof createSessionService>;
