// Embedded single-user mode: one local user, owner of one local org, created on first start.
import type { Db } from "../db";
import type { Actor } from "./types";

export const LOCAL_EMAIL = "local@quiver.invalid";

export async function ensureLocalActor(db: Db): Promise<Actor> {
  const user = await db.user.upsert({
    where: { email: LOCAL_EMAIL },
    update: {},
    create: { email: LOCAL_EMAIL, name: "Local user" },
  });
  const org = await db.org.upsert({ where: { slug: "local" }, update: {}, create: { slug: "local", name: "Local" } });
  const membership = await db.membership.upsert({
    where: { userId_orgId: { userId: user.id, orgId: org.id } },
    update: {},
    create: { userId: user.id, orgId: org.id, role: "owner" },
  });
  return { userId: user.id, orgId: org.id, role: membership.role as Actor["role"] };
}
