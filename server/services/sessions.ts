// Sessions: the unit a person works in (a workspace on a runner, a chat with the agent). A new
// session is named by the time it was made until its first message names it; the person may
// rename it, and delete it (with everything recorded in it) when no turn is running.
import { TRPCError } from "@trpc/server";
import type { Db, DbProvider } from "../db";
import { sqliteDate } from "../db/driver";
import type { ProviderKind } from "../engine/types";
import type { ModelChoices } from "../engine/providers/index";
import type { Actor } from "./types";
import type { ModelLister, ModelListing } from "./model-list";
import { sessionCost } from "./session-cost";
import { sessionEndChore } from "./runner-chores";
import type { SessionCost } from "../protocol/ide-types";
import { priceTable, type PriceTable } from "../engine/pricing/prices";

export interface SessionSummary {
  id: string;
  title: string;
  status: string;
  provider: string | null;
  model: string | null;
  /** The project it works in (null: made before projects). */
  projectId: string | null;
  createdAt: string;
  updatedAt: string;
}

function summarize(s: {
  id: string;
  title: string;
  status: string;
  provider: string | null;
  model: string | null;
  projectId: string | null;
  createdAt: Date;
  updatedAt: Date;
}): SessionSummary {
  return {
    id: s.id,
    projectId: s.projectId,
    title: s.title,
    status: s.status,
    provider: s.provider,
    model: s.model,
    createdAt: s.createdAt.toISOString(),
    updatedAt: s.updatedAt.toISOString(),
  };
}

// NAME_IF_UNNAMED below says the same in SQL.
const DEFAULT_TITLE = /^Session \d{4}-\d{2}-\d{2} \d{2}:\d{2}$/;
const TITLE_CHARS = 60;

/** A title from a first message: its first line with text, cut at a word near TITLE_CHARS. */
export function titleFrom(text: string): string | undefined {
  const line = text
    .split("\n")
    .map((l) => l.replace(/\s+/g, " ").trim())
    .find((l) => l.length > 0);
  if (!line) return undefined;
  if (line.length <= TITLE_CHARS) return line;
  const cut = line.slice(0, TITLE_CHARS);
  const space = cut.lastIndexOf(" ");
  return `${space > TITLE_CHARS / 2 ? cut.slice(0, space) : cut}…`;
}

export interface SessionServiceOptions {
  /** Before a delete: the session's events still waiting to be written are written. Deleted
   *  under them, their rows' foreign key would fail the write-behind's batch that every
   *  session shares, and the session's last events would be logged as lost. */
  beforeRemove?(sessionId: string): Promise<void>;
  /** A session was deleted: whatever holds it in memory lets go (its runner binding). */
  onRemoved?(sessionId: string): void;
  /** The providers this server can reach (the engine's): a session may not choose another. */
  modelChoices?(): ModelChoices;
  /** The person's workspace of the project (none named: the org's Default project), placed on a
   *  runner if it is new (services/projects.ts). */
  workspaceFor?(actor: Actor, projectId?: string): Promise<{ projectId: string; workspaceId: string }>;
  /** The providers' model lists for the picker (services/model-list.ts). */
  models?: ModelLister;
  /** The operator's prices (QUIVER_PRICES) over the built-in table. */
  prices?: PriceTable;
  /** Named: the first message's title is set by one plain statement (the query thread runs it
   *  on its driver), not Prisma's read and update, each compiled in WebAssembly per call. */
  dbProvider?: DbProvider;
}

/** The title set only while it is still DEFAULT_TITLE, as Prisma's updateMany would, updatedAt
 *  included (SQLite keeps it as ISO text with +00:00; PostgreSQL's timestamp(3) holds UTC). */
const NAME_IF_UNNAMED: Record<DbProvider, { sql: string; now: () => string }> = {
  sqlite: {
    sql: `UPDATE "Session" SET "title" = ?, "updatedAt" = ? WHERE "id" = ? AND "title" GLOB 'Session [0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]'`,
    now: () => sqliteDate(new Date()),
  },
  postgresql: {
    sql: `UPDATE "Session" SET "title" = $1, "updatedAt" = $2::timestamp(3) WHERE "id" = $3 AND "title" ~ '^Session [0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}$'`,
    now: () => new Date().toISOString(),
  },
};

const PROVIDER_NAMES: Record<ProviderKind, string> = { anthropic: "Anthropic", openai: "The OpenAI-compatible API" };

export function createSessionService(db: Db, options: SessionServiceOptions = {}) {
  const prices = priceTable(options.prices);
  return {
    /** The person's sessions in their org, latest first; with `projectId`, that project's only. */
    async list(actor: Actor, filter: { projectId?: string } = {}): Promise<SessionSummary[]> {
      const rows = await db.session.findMany({
        where: {
          orgId: actor.orgId,
          ownerId: actor.userId,
          ...(filter.projectId ? { projectId: filter.projectId } : {}),
        },
        orderBy: { updatedAt: "desc" },
        take: 200,
      });
      return rows.map(summarize);
    },

    async create(
      actor: Actor,
      input: { title?: string; workspace?: string; projectId?: string },
    ): Promise<SessionSummary> {
      const title = input.title ?? `Session ${new Date().toISOString().slice(0, 16).replace("T", " ")}`;
      const place = options.workspaceFor ? await options.workspaceFor(actor, input.projectId) : undefined;
      const row = await db.session.create({
        data: {
          title,
          ownerId: actor.userId,
          orgId: actor.orgId,
          workspace: input.workspace ?? "",
          projectId: place?.projectId,
          workspaceId: place?.workspaceId,
        },
      });
      return summarize(row);
    },

    async get(actor: Actor, id: string): Promise<SessionSummary> {
      const row = await db.session.findFirst({ where: { id, orgId: actor.orgId } });
      if (!row) throw new TRPCError({ code: "NOT_FOUND", message: `No session ${id}.` });
      return summarize(row);
    },

    async rename(actor: Actor, id: string, title: string): Promise<SessionSummary> {
      const { count } = await db.session.updateMany({ where: { id, orgId: actor.orgId }, data: { title } });
      if (count === 0) throw new TRPCError({ code: "NOT_FOUND", message: `No session ${id}.` });
      return this.get(actor, id);
    },

    /** The provider and model the session's next turns use; null for either: the server's
     *  default (a provider without a model: that provider's default model). */
    async setModel(
      actor: Actor,
      id: string,
      choice: { provider: ProviderKind | null; model: string | null },
    ): Promise<SessionSummary> {
      const offered = choice.provider && options.modelChoices?.().providers.find((p) => p.kind === choice.provider);
      if (offered && !offered.configured) {
        throw new TRPCError({
          code: "BAD_REQUEST",
          message: `${PROVIDER_NAMES[offered.kind]} is not configured on this server: set ${offered.needs} and restart Quiver.`,
        });
      }
      const { count } = await db.session.updateMany({
        where: { id, orgId: actor.orgId },
        data: { provider: choice.provider, model: choice.model },
      });
      if (count === 0) throw new TRPCError({ code: "NOT_FOUND", message: `No session ${id}.` });
      return this.get(actor, id);
    },

    /** The provider's models for the picker; an empty list with the reason when it cannot be read. */
    async listModels(provider: ProviderKind): Promise<ModelListing> {
      if (!options.models)
        return {
          provider,
          models: [],
          error: "This server does not list models; type a model name.",
          fetchedAt: new Date().toISOString(),
        };
      return options.models.list(provider);
    },

    /** Tokens and dollars per turn and for the session (access checked by the caller). */
    cost(id: string): Promise<SessionCost> {
      return sessionCost(db, id, prices);
    },

    /** Names a session still called by its creation time after the message that starts it. */
    async nameFromFirstMessage(id: string, text: string): Promise<void> {
      const title = titleFrom(text);
      if (!title) return;
      if (options.dbProvider) {
        const { sql, now } = NAME_IF_UNNAMED[options.dbProvider];
        await db.$executeRawUnsafe(sql, title, now(), id);
        return;
      }
      const row = await db.session.findUnique({ where: { id }, select: { title: true } });
      if (!row || !DEFAULT_TITLE.test(row.title)) return;
      // Only if still unnamed: a rename meanwhile wins.
      await db.session.updateMany({ where: { id, title: row.title }, data: { title } });
    },

    /** Deletes the session and everything recorded in it (messages, events, tool calls,
     *  spills, share links), in one statement that refuses while a turn runs. The workspace's
     *  files are not touched. */
    async remove(actor: Actor, id: string): Promise<void> {
      if (options.beforeRemove) {
        // Only for the session's own org: another's wait would tell it the session is live.
        await this.assertAccess(actor, id);
        await options.beforeRemove(id);
      }
      // What its runner owes (its commands, its checkpoint ref) is recorded with the delete: a
      // server killed right after it, or a runner away, does not leave it undone (runner-chores.ts).
      const chore = await sessionEndChore(db, id);
      const [{ count }] = await db.$transaction([
        db.session.deleteMany({ where: { id, orgId: actor.orgId, turns: { none: { status: "running" } } } }),
        ...(chore ? [chore.write] : []),
      ]);
      if (count > 0) return options.onRemoved?.(id);
      // Not deleted: the chore written with it is owed nothing (and would be dropped unrun anyway).
      if (chore) await db.runnerChore.deleteMany({ where: { id: chore.id } });
      await this.assertAccess(actor, id);
      throw new TRPCError({
        code: "CONFLICT",
        message: "A turn is running in this session. Stop it first, then delete the session.",
      });
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
