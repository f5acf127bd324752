// Every procedure of appRouter, walked as a share-link viewer: only the reads on ALLOWED work,
// and only for the viewer's own session; everything else is FORBIDDEN. A procedure added later
// without a decision fails here (add it to ALLOWED only if a viewer may really use it).
// Anonymous requests and ended links are refused on every non-public procedure as well.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testDatabases, useTestDb } from "../testing/db";
import { seedSession } from "../testing/hub";
import { createEventHub, type EventHub } from "../hub/events";
import { createSessionHistory } from "../hub/history";
import { RunnerPool } from "../executors/runner-pool";
import { createFileService } from "../services/files";
import { createSessionService } from "../services/sessions";
import { createShareService } from "../services/shares";
import { createSpillStore } from "../services/spills";
import { createPolicyService } from "../services/policies";
import { createCheckpointService } from "../services/checkpoints";
import type { Services } from "../services/types";
import { appRouter } from "./root";
import { contextFor } from "./context";
import { VIEWER_REFUSED, type Context } from "./trpc";
import { defaultInput } from "../auth/authorize-table";

/** What a viewer may call (on its own session). Public ones answer anyone. */
const ALLOWED = new Set([
  "health.get",
  "auth.whoami",
  "sessions.get",
  // The cost line under each turn: tokens the viewer already sees in the turn events, priced.
  "sessions.cost",
  "turns.window",
  "turns.earlier",
  "turns.events",
  "files.tree",
  "files.search",
  "files.find",
  "files.read",
  "files.usage",
  "files.diagnostics",
  "files.changes",
  "files.original",
  "spills.read",
  "attachments.read",
  "projects.workspaceOf",
  "orgs.invitation",
  "checkpoints.list",
  "checkpoints.diff",
]);
/** orgs.invitation answers whoever holds the link's token (it is how a signed-out person is invited). */
const PUBLIC = new Set(["health.get", "auth.whoami", "orgs.invitation"]);

const procedures = Object.entries(
  (appRouter._def as unknown as { procedures: Record<string, { _def: { type: string } }> }).procedures,
);

/** The access table's input for a session, and what the viewer's own procedures take besides. */
const inputFor = (sessionId: string) => ({
  ...defaultInput({ sessionId, linkId: "sl0", approvalId: "ap0" }),
  token: "t".repeat(32),
  callId: "call0",
  answer: { option: 0 },
});

async function call(ctx: Context, path: string, input: unknown): Promise<{ code?: string; message?: string }> {
  const caller = appRouter.createCaller(ctx) as unknown as Record<
    string,
    Record<string, (i: unknown) => Promise<unknown>>
  >;
  const [area, name] = path.split(".");
  try {
    const out = await caller[area][name](input);
    // A subscription answers an async iterable once its checks passed: close it.
    const iterate = (out as { [Symbol.asyncIterator]?: () => AsyncIterator<unknown> } | null)?.[Symbol.asyncIterator];
    if (typeof iterate === "function") await iterate.call(out).return?.();
    return {};
  } catch (err) {
    return { code: (err as { code?: string }).code, message: (err as Error).message };
  }
}

describe.each(testDatabases())("a viewer's access to every procedure on %s", (provider) => {
  const t = useTestDb(provider);
  let services: Services;
  let hub: EventHub;
  let spills: ReturnType<typeof createSpillStore>;
  let pool: RunnerPool;
  let own: string;
  let other: string;
  let viewer: Context;

  beforeAll(async () => {
    const db = t.current.db;
    const a = await seedSession(db);
    const b = await seedSession(db);
    own = a.sessionId;
    other = b.sessionId;
    hub = createEventHub(db, { url: t.current.url });
    spills = createSpillStore(db, t.current.url);
    pool = new RunnerPool({ tokens: ["t".repeat(32)] });
    services = {
      db,
      dbProvider: provider,
      sessions: createSessionService(db),
      shares: createShareService(db),
      hub,
      history: createSessionHistory(db),
      spills,
      policies: createPolicyService(db),
      files: createFileService(pool),
      runners: pool,
      attachments: t.current.rows,
      health: async () => ({ ok: true }),
      checkpoints: createCheckpointService({
        db,
        runner: pool,
        publish: (sessionId, body) => hub.publish(sessionId, body),
      }),
    } as unknown as Services;
    viewer = contextFor(services, { kind: "viewer", sessionId: own, linkId: "sl0", expiresAt: null });
  });
  afterAll(async () => {
    await hub?.dispose();
    await spills?.close();
    await pool?.dispose();
  });

  it("lists every procedure it judges (the walk is not empty)", () => {
    expect(procedures.length).toBeGreaterThan(20);
    for (const name of ALLOWED) expect(procedures.map(([p]) => p)).toContain(name);
  });

  it.each(procedures.filter(([p]) => !ALLOWED.has(p)).map(([p]) => [p]))("refuses %s with FORBIDDEN", async (path) => {
    const r = await call(viewer, path, inputFor(own));
    expect(r).toEqual({ code: "FORBIDDEN", message: VIEWER_REFUSED });
  });

  it.each([...ALLOWED].filter((p) => !PUBLIC.has(p)).map((p) => [p]))(
    "lets %s read the viewer's own session only",
    async (path) => {
      const mine = await call(viewer, path, inputFor(own));
      // It may still fail for its own reasons (no runner, no such spill), never for access.
      expect(["FORBIDDEN", "UNAUTHORIZED"]).not.toContain(mine.code);
      expect(await call(viewer, path, inputFor(other))).toEqual({
        code: "FORBIDDEN",
        message: "This share link is for another session.",
      });
    },
  );

  it.each(procedures.filter(([p]) => !PUBLIC.has(p)).map(([p]) => [p]))(
    "refuses %s to strangers and ended links",
    async (path) => {
      const anonymous = await call(contextFor(services, { kind: "anonymous" }), path, inputFor(own));
      expect(anonymous.code).toBe("UNAUTHORIZED");
      expect(anonymous.message).toMatch(/signin\?token=/);
      const ended = await call(
        contextFor(services, { kind: "ended", sessionId: own, reason: "revoked" }),
        path,
        inputFor(own),
      );
      expect(ended).toEqual({
        code: "FORBIDDEN",
        message: "This share link was revoked. Ask the session's owner for a new one.",
      });
    },
  );

  it("tells the IDE who it is", async () => {
    expect(await appRouter.createCaller(viewer).auth.whoami()).toEqual({ kind: "viewer", sessionId: own });
    const owner = contextFor(services, {
      kind: "owner",
      via: "loopback",
      actor: { userId: "u", orgId: "o", role: "owner" },
    });
    expect(await appRouter.createCaller(owner).auth.whoami()).toEqual({ kind: "member", userId: expect.any(String) });
    expect(await appRouter.createCaller(contextFor(services, { kind: "anonymous" })).auth.whoami()).toMatchObject({
      kind: "refused",
      code: "UNAUTHORIZED",
    });
  });
});
