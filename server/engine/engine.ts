// The engine service: starts a turn when a user sends a message (one running turn per
// session), cancels it, recovers turns a previous process left running, and owns every turn
// it started until it ends or the engine is disposed.
import type { BeginImage, Db, DbProvider, TurnRows } from "../db";
import type { Env } from "../env";
import type { EventHub } from "../hub/events";
import type { Dispatcher } from "../pipeline/contract";
import {
  createAdapter,
  defaultRetryPolicy,
  modelChoices,
  resolveProvider,
  type ModelChoices,
  type RetryPolicy,
} from "./providers/index";
import { recoverInterruptedTurns } from "./recovery";
import { COMPACT_COMMAND } from "./compact";
import { ContextWindows, RecentContext, lastRequestTokens } from "./context";
import { runTurn, type TurnContext } from "./turn";
import type { SubagentLimits } from "./subagent";
import { lateEnds } from "./late-ends";
import { isDatabaseFault } from "../db/faults";
import { ImageData, ImageError, prepareImages } from "./images";
import type { SendImage } from "../protocol/attachments";
import { zeroUsage, type ProviderAdapter, type ProviderConfig, type ToolCatalog } from "./types";
import { logFn } from "../log";

export interface EngineDeps {
  db: Db;
  /** The database's provider: the hot reads before each request go through plain SQL with it
   *  (services/session-modes.ts); without it, through Prisma. */
  dbProvider?: DbProvider;
  /** The turn's hot-path rows (DbHandle.rows). */
  rows: TurnRows;
  hub: EventHub;
  dispatcher: Dispatcher;
  /** The tool slot's catalog; none: the model is offered no tools. */
  catalog?: ToolCatalog;
  env: Pick<
    Env,
    | "QUIVER_PROVIDER"
    | "QUIVER_MODEL"
    | "ANTHROPIC_API_KEY"
    | "ANTHROPIC_BASE_URL"
    | "OPENAI_API_KEY"
    | "OPENAI_BASE_URL"
  > &
    Partial<Pick<Env, "QUIVER_CONTEXT_WINDOW">>;
  /** Must give the same text for a session every time (it heads the cached prefix). */
  systemPrompt?: string | ((sessionId: string) => string | Promise<string>);
  /** Model requests per turn before it stops (default 50). */
  maxSteps?: number;
  /** The task tool's subagents: steps each, and how many at once (subagent.ts). */
  subagents?: SubagentLimits;
  maxOutputTokens?: number;
  retry?: RetryPolicy;
  /** Several server instances on one database (hub/commands.ts): this one's id, and the others. */
  cluster?: EngineCluster;
  /** Tests and embedders may supply their own adapter; default: the SDK-based ones. */
  adapterFor?: (config: ProviderConfig) => ProviderAdapter;
  log?: (message: string, err?: unknown) => void;
}

export interface EngineCluster {
  instanceId: string;
  /** Cancels the session's turn running on another live instance; false when none runs there. */
  cancelElsewhere(sessionId: string): Promise<boolean>;
}

export interface SendResult {
  turnId: string;
  messageId: string;
  /** The session's first message (what names a new session: services/sessions). */
  first: boolean;
}

export interface Engine {
  /** Stores the message and starts a turn; resolves once both are recorded (the turn runs on).
   *  With `actor.orgId`, a session of another org is not found: the access check rides on the
   *  engine's own read of the session instead of costing a query of its own. */
  sendMessage(
    sessionId: string,
    actor: { userId: string; orgId?: string },
    text: string,
    images?: SendImage[],
  ): Promise<SendResult>;
  /** Aborts the running turn of the session at once (on whichever instance runs it); false when none was running. */
  cancel(sessionId: string): Promise<boolean>;
  /** Marks turns left running by an earlier process as interrupted; returns how many. */
  recoverInterrupted(): Promise<number>;
  isRunning(sessionId: string): boolean;
  /** Resolves when the session's current turn (if any) has finished and been recorded. */
  settled(sessionId: string): Promise<void>;
  /** The ids of the turns this engine is running. */
  runningTurns(): string[];
  /** Stops these turns at once, the turn itself writing and publishing nothing more: a peer
   *  instance took them over (it thought this one gone) and has recorded their end. A tool call
   *  still running is cancelled by the turn's signal and settled by the pipeline as usual.
   *  Returns how many ran here. */
  abandon(turnIds: string[]): number;
  /** The providers and models a session may choose on this server (the IDE's model picker). */
  modelChoices(): ModelChoices;
  /** Interrupts running turns (recorded as interrupted) and waits for them to close. */
  dispose(): Promise<void>;
}

export class EngineError extends Error {
  constructor(
    readonly code: "busy" | "not_found" | "empty" | "invalid" | "disposed" | "unavailable",
    message: string,
  ) {
    super(message);
  }
}

export const defaultSystemPrompt =
  "You are Quiver's coding agent, working in the user's workspace through the tools you are given. " +
  "Call tools only through the tool-calling interface, never by writing calls as text. " +
  "Read before you edit, keep changes minimal, and say plainly what you did and what you did not do.";

/** A turn this engine runs, by session: how to stop it, when it is done, and whether a peer took it over. */
interface RunningTurn {
  controller: AbortController;
  done: Promise<void>;
  turnId?: string;
  abandoned?: boolean;
}

export function createEngine(deps: EngineDeps): Engine {
  const log = deps.log ?? logFn("engine");
  const { db } = deps;
  const running = new Map<string, RunningTurn>();
  /** Every turn still closing, including ones already released from `running`. */
  const inflight = new Set<Promise<void>>();
  const adapters = new Map<string, ProviderAdapter>();
  let shuttingDown = false;
  const system = deps.systemPrompt ?? defaultSystemPrompt;
  // The context each session's latest request filled: kept here once known (for the most
  // recent sessions), read from its last model request otherwise (after a restart, or when a
  // peer instance ran its last turn).
  const lastTokens = new RecentContext();
  const context: TurnContext = {
    windows: new ContextWindows(deps.env.QUIVER_CONTEXT_WINDOW),
    async lastTokens(sessionId) {
      const known = lastTokens.get(sessionId);
      if (known !== undefined) return known;
      return lastRequestTokens(db, sessionId, deps.dbProvider);
    },
    setLastTokens: (sessionId, tokens) => lastTokens.set(sessionId, tokens),
  };
  // Turn ends the database refused, recorded once it takes writes again (late-ends.ts).
  const late = lateEnds({ rows: deps.rows, hub: deps.hub, log });
  const turnDeps = {
    db,
    dbProvider: deps.dbProvider,
    rows: deps.rows,
    hub: deps.hub,
    dispatcher: deps.dispatcher,
    catalog: deps.catalog ?? { catalog: () => [] },
    systemPrompt: async (id: string) => (typeof system === "string" ? system : system(id)),
    retry: deps.retry ?? defaultRetryPolicy,
    maxSteps: deps.maxSteps ?? 50,
    subagents: deps.subagents,
    context,
    images: new ImageData(deps.rows),
    log,
    unrecorded: late.add,
  };
  /** A database fault as the error a caller gets: the reason and where, not "busy". */
  const unavailable = (err: unknown) => (isDatabaseFault(err) ? new EngineError("unavailable", err.message) : err);

  const adapterFor = (config: ProviderConfig) => {
    const key = JSON.stringify(config);
    let a = adapters.get(key);
    if (!a) adapters.set(key, (a = (deps.adapterFor ?? createAdapter)(config)));
    return a;
  };

  async function sendMessage(
    sessionId: string,
    actor: { userId: string; orgId?: string },
    text: string,
    sent: SendImage[] = [],
  ): Promise<SendResult> {
    if (shuttingDown) throw new EngineError("disposed", "The server is shutting down; try again in a moment.");
    if (!text.trim() && sent.length === 0) throw new EngineError("empty", "The message is empty.");
    if (running.has(sessionId)) {
      // Another org's caller learns nothing of the session, not even that it is busy.
      if (
        actor.orgId !== undefined &&
        !(await db.session.findFirst({ where: { id: sessionId, orgId: actor.orgId }, select: { id: true } }))
      ) {
        throw new EngineError("not_found", `No session ${sessionId}.`);
      }
      throw new EngineError("busy", "A turn is already running in this session. Wait for it or cancel it first.");
    }
    // Decoded and checked only once the session is known not to be busy here.
    let images: BeginImage[];
    try {
      images = prepareImages(sent);
    } catch (err) {
      if (err instanceof ImageError) throw new EngineError("invalid", err.message);
      throw err;
    }
    // Reserve the slot before the first await so two quick sends cannot both start a turn.
    const controller = new AbortController();
    let release!: () => void;
    const done = new Promise<void>((r) => (release = r));
    const entry: RunningTurn = { controller, done };
    running.set(sessionId, entry);
    inflight.add(done);
    void done.then(() => inflight.delete(done));
    try {
      const { hub } = deps;
      // A turn of this session that ended while nothing could be written is recorded first.
      await late.settle(sessionId).catch((err: unknown) => {
        throw unavailable(err);
      });
      // One transaction: the session (in the caller's org), no turn running on any server, the
      // new turn and the user's message after the last one.
      const turn = await deps.rows
        .begin({ sessionId, orgId: actor.orgId, instanceId: deps.cluster?.instanceId, text, images })
        .catch((err: unknown) => {
          throw unavailable(err);
        });
      if (!turn.ok && turn.reason === "not_found") throw new EngineError("not_found", `No session ${sessionId}.`);
      if (!turn.ok && turn.reason === "no_attachment")
        throw new EngineError("invalid", `No image ${turn.id} in this session to send again; attach it anew.`);
      if (!turn.ok)
        throw new EngineError(
          "busy",
          "A turn is already running in this session (on another server). Wait for it or cancel it first.",
        );
      const { position } = turn;
      entry.turnId = turn.turnId;
      // In order (the hub numbers them as published), durable together: one write, not two.
      await Promise.all([
        hub.publish(sessionId, { type: "turn.started", turnId: turn.turnId }),
        hub.publish(sessionId, {
          type: "message.user",
          messageId: turn.messageId,
          text,
          ...(turn.images.length ? { images: turn.images } : {}),
        }),
      ]);
      const resolution = resolveProvider(deps.env, turn, { maxOutputTokens: deps.maxOutputTokens });
      const run = {
        sessionId,
        turnId: turn.turnId,
        actorId: actor.userId,
        signal: controller.signal,
        firstPosition: position + 1,
        instanceId: deps.cluster?.instanceId,
        shutdown: () => shuttingDown,
        abandoned: () => entry.abandoned === true,
        release: () => {
          if (running.get(sessionId)?.controller === controller) running.delete(sessionId);
        },
      };
      const work = resolution.ok
        ? runTurn(turnDeps, {
            ...run,
            adapter: adapterFor(resolution.config),
            compactOnly: COMPACT_COMMAND.test(text.trim()),
          })
        : refuse(turnDeps, run, resolution.message);
      void work
        .catch((err) => log(`turn ${turn.turnId} crashed`, err))
        .finally(() => {
          run.release();
          release();
        });
      return { turnId: turn.turnId, messageId: turn.messageId, first: position === 0 };
    } catch (err) {
      // Begun, then refused its first events: its row must not stay `running` (late-ends.ts).
      if (entry.turnId && isDatabaseFault(err)) {
        const turnId = entry.turnId;
        late.add(sessionId, {
          end: {
            turnId,
            sessionId,
            instanceId: deps.cluster?.instanceId,
            status: "failed",
            stopReason: "database_error",
            error: err.message,
            usage: zeroUsage(),
            sessionStatus: "idle",
          },
          events: [{ body: { type: "turn.finished", turnId, status: "failed", stopReason: "database_error" } }],
        });
      }
      running.delete(sessionId);
      release();
      throw unavailable(err);
    }
  }

  return {
    sendMessage,
    async cancel(sessionId) {
      const r = running.get(sessionId);
      if (!r && late.has(sessionId)) {
        // Its turn already stopped; what is left is to record that, now the database may take it.
        await late.settle(sessionId).catch((err: unknown) => {
          throw unavailable(err);
        });
        return true;
      }
      if (!r) return deps.cluster ? deps.cluster.cancelElsewhere(sessionId) : false;
      r.controller.abort();
      await r.done;
      return true;
    },
    recoverInterrupted: () => recoverInterruptedTurns(deps.db, deps.hub, log),
    isRunning: (sessionId) => running.has(sessionId),
    runningTurns: () => [...running.values()].flatMap((r) => (r.turnId ? [r.turnId] : [])),
    abandon(turnIds) {
      let stopped = 0;
      for (const r of running.values()) {
        if (!r.turnId || !turnIds.includes(r.turnId)) continue;
        r.abandoned = true;
        r.controller.abort();
        stopped++;
      }
      return stopped;
    },
    modelChoices: () => modelChoices(deps.env),
    settled: async (sessionId) => {
      await running.get(sessionId)?.done;
    },
    async dispose() {
      shuttingDown = true;
      const all = [...running.values()];
      for (const r of all) r.controller.abort();
      await Promise.all([...all.map((r) => r.done), ...inflight]);
      await late.dispose();
    },
  };
}

/** No provider: the turn ends at once with an error event that says how to configure one. */
async function refuse(
  deps: { rows: TurnRows; hub: EventHub },
  run: { sessionId: string; turnId: string; instanceId?: string; release(): void },
  message: string,
) {
  const { sessionId, turnId } = run;
  await deps.hub.publish(sessionId, { type: "error", turnId, code: "provider_not_configured", message });
  await deps.rows.end({
    turnId,
    sessionId,
    instanceId: run.instanceId,
    status: "failed",
    stopReason: "provider_not_configured",
    error: message,
    usage: zeroUsage(),
    sessionStatus: "idle",
  });
  run.release();
  await deps.hub.publish(sessionId, {
    type: "turn.finished",
    turnId,
    status: "failed",
    stopReason: "provider_not_configured",
  });
}
