// Test helpers: a user, an org and a session to hang events and turns on; a session whose
// events were published through a real hub and stored.
import { randomBytes } from "node:crypto";
import type { Db } from "../db";
import { createEventHub } from "../hub/events";
import type { SessionEvent, SessionEventBody } from "../protocol/events";

export async function seedSession(
  db: Db,
  fields: { provider?: string; model?: string } = {},
): Promise<{ sessionId: string; userId: string; orgId: string }> {
  const tag = randomBytes(4).toString("hex");
  const user = await db.user.create({ data: { email: `u-${tag}@test.invalid`, name: "Test user" } });
  const org = await db.org.create({ data: { slug: `org-${tag}`, name: "Test org" } });
  await db.membership.create({ data: { userId: user.id, orgId: org.id, role: "owner" } });
  const session = await db.session.create({
    data: { title: "test", ownerId: user.id, orgId: org.id, workspace: "", ...fields },
  });
  return { sessionId: session.id, userId: user.id, orgId: org.id };
}

/** A new session with `bodies` published in order and stored (the hub disposed, so written). */
export async function publishedSession(
  db: { db: Db; url: string },
  bodies: SessionEventBody[],
): Promise<{ sessionId: string; all: SessionEvent[] }> {
  const hub = createEventHub(db.db, { url: db.url, writeDelayMs: 0 });
  const { sessionId } = await seedSession(db.db);
  const all = await Promise.all(bodies.map((b) => hub.publish(sessionId, b)));
  await hub.dispose();
  return { sessionId, all };
}
