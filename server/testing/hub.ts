// Test helper: a user, an org and a session to hang events and turns on.
import { randomBytes } from "node:crypto";
import type { Db } from "../db";

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
