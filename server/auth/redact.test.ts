// What a share-link viewer reads has secrets taken out: the patterns on their own, and through
// the tRPC procedures a viewer may call (events as they stream, a session's data), while the
// owner reads the same data untouched.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { redactDeep, redactText, REDACTED } from "./redact";
import { testDatabases, useTestDb } from "../testing/db";
import { seedSession } from "../testing/hub";
import { createEventHub, type EventHub } from "../hub/events";
import { createSessionService } from "../services/sessions";
import type { Services } from "../services/types";
import { appRouter } from "../api/root";
import { contextFor } from "../api/context";

describe("redactText", () => {
  it.each([
    ["OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz0123", `OPENAI_API_KEY=${REDACTED}`],
    ['export DB_PASSWORD="hunter2 with spaces"', `export DB_PASSWORD=${REDACTED}`],
    // An edit's diff on its tool card: the same lines behind a diff's +/- marker.
    [
      "@@ -1,2 +1,2 @@\n-API_TOKEN=old-value-1\n+API_TOKEN=new-value-2\n HOST=db",
      `@@ -1,2 +1,2 @@\n-API_TOKEN=${REDACTED}\n+API_TOKEN=${REDACTED}\n HOST=db`,
    ],
    ["key sk-ant-api03-abcdefghijklmnopqrstuvwxyz in text", `key ${REDACTED} in text`],
    ["aws AKIAIOSFODNN7EXAMPLE here", `aws ${REDACTED} here`],
    ["token ghp_0123456789abcdefghijABCDEFGHIJ012345 ok", `token ${REDACTED} ok`],
    ["postgres://quiver:s3cr3t@db.internal:5432/app", `postgres://quiver:${REDACTED}@db.internal:5432/app`],
    ["Authorization: Bearer abcdefghijklmnop.qrstuvwx", `Authorization: Bearer ${REDACTED}`],
    ['{"password": "correct horse", "user": "ann"}', `{"password": "${REDACTED}", "user": "ann"}`],
    ["const apiKey = 'abcd1234';", `const apiKey = '${REDACTED}';`],
    [
      "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----",
      `-----BEGIN PRIVATE KEY-----${REDACTED}-----END PRIVATE KEY-----`,
    ],
    [
      "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
      `jwt ${REDACTED}`,
    ],
  ])("takes the secret out of %j", (input, expected) => {
    expect(redactText(input)).toBe(expected);
  });

  it.each([
    "const token = getToken(session);",
    "function rotatePassword(user) { return hash(user); }",
    "https://example.com/docs/api-keys",
    "The tokenizer splits text into tokens.",
    "skip-navigation and sk-short",
  ])("leaves ordinary text alone: %j", (input) => {
    expect(redactText(input)).toBe(input);
  });

  it("walks arrays and plain objects, keeping other values (tracked envelopes' symbols, dates)", () => {
    const marker = Symbol("tracked");
    const at = new Date(0);
    const out = redactDeep(["7", { type: "text.delta", text: "PGPASSWORD=hunter22", n: 3, at }, marker]);
    expect(out).toEqual(["7", { type: "text.delta", text: `PGPASSWORD=${REDACTED}`, n: 3, at }, marker]);
    expect(out[2]).toBe(marker);
  });
});

describe.each(testDatabases())("what a viewer reads on %s", (provider) => {
  const t = useTestDb(provider);
  let hub: EventHub;
  let services: Services;
  let sessionId: string;
  let owner: { userId: string; orgId: string };
  beforeAll(async () => {
    const seeded = await seedSession(t.current.db);
    sessionId = seeded.sessionId;
    owner = seeded;
    hub = createEventHub(t.current.db, { url: t.current.url });
    services = {
      db: t.current.db,
      dbProvider: provider,
      sessions: createSessionService(t.current.db),
      hub,
    } as unknown as Services;
  });
  afterAll(() => hub?.dispose());

  const firstEvents = async (ctx: ReturnType<typeof contextFor>, n: number) => {
    const caller = appRouter.createCaller(ctx);
    const stream = (await caller.turns.events({ sessionId })) as unknown as AsyncIterable<unknown>;
    const out: unknown[] = [];
    for await (const item of stream) {
      out.push(item);
      if (out.length === n) break;
    }
    return out.map((e) => (Array.isArray(e) ? e[1] : e) as { type: string; text?: string });
  };

  it("streams events with secrets redacted to a viewer and untouched to the owner", async () => {
    await hub.publish(sessionId, {
      type: "text.delta",
      turnId: "t1",
      text: "Set OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz0123 in .env",
    });
    await hub.publish(sessionId, {
      type: "notice",
      level: "info",
      code: "x",
      text: "connect to postgres://app:pa55word@db/app",
    });
    // The text's last word is held until its stream ends (auth/redact-stream.ts): here, the turn.
    await hub.publish(sessionId, { type: "turn.finished", turnId: "t1", status: "completed" });
    const viewer = await firstEvents(
      contextFor(services, { kind: "viewer", sessionId, linkId: "sl0", expiresAt: null }),
      3,
    );
    expect(viewer.map((e) => e.text)).toEqual([
      `Set OPENAI_API_KEY=${REDACTED} in .env`,
      `connect to postgres://app:${REDACTED}@db/app`,
      undefined,
    ]);
    const own = await firstEvents(
      contextFor(services, {
        kind: "owner",
        via: "loopback",
        actor: { userId: owner.userId, orgId: owner.orgId, role: "owner" },
      }),
      2,
    );
    expect(own[0].text).toContain("sk-proj-abcdefghijklmnopqrstuvwxyz0123");
  });

  it("redacts an edit's diff on its tool.finished event for a viewer", async () => {
    const diff = "--- a/.env\n+++ b/.env\n@@ -1,2 +1,2 @@\n-API_TOKEN=old-value-1\n+API_TOKEN=new-value-2\n HOST=db\n";
    await hub.publish(sessionId, {
      type: "tool.finished",
      callId: "c1",
      status: "succeeded",
      output: "Edited .env",
      isError: false,
      truncated: false,
      durationMs: 1,
      diff,
    });
    const viewer = (await firstEvents(
      contextFor(services, { kind: "viewer", sessionId, linkId: "sl0", expiresAt: null }),
      4,
    )) as { diff?: string }[];
    expect(viewer[3].diff).toBe(
      `--- a/.env\n+++ b/.env\n@@ -1,2 +1,2 @@\n-API_TOKEN=${REDACTED}\n+API_TOKEN=${REDACTED}\n HOST=db\n`,
    );
  });
});
