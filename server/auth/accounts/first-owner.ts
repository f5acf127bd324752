// The first account takes over the local owner: the embedded server's one user row (and with
// it every session, policy version, audit row and membership that names it) gets the person's
// email, name and a password, in one transaction with the credential row. AuthAccount's unique
// (providerId, accountId) makes it happen once, whatever races it; a kill -9 leaves either the
// local owner as it was or the finished account.
import type { Db } from "../../db";
import { LOCAL_EMAIL } from "../../services/local-user";

export class FirstOwnerError extends Error {
  constructor(
    message: string,
    readonly status: 400 | 403 | 409,
  ) {
    super(message);
  }
}

/** True once any account exists (accounts are then on for good). */
export async function anyAccount(db: Db): Promise<boolean> {
  return (await db.authAccount.count({ take: 1 })) > 0;
}

export interface FirstOwner {
  name: string;
  email: string;
  /** The password's hash, made by better-auth's own hasher. */
  passwordHash: string;
}

/** Turns the local owner into this person; returns the user id (the local owner's). */
export async function takeOverLocalOwner(db: Db, owner: FirstOwner): Promise<string> {
  if (await anyAccount(db))
    throw new FirstOwnerError(
      "This server already has its first account: sign in, or ask an admin for an invitation.",
      409,
    );
  let local = await db.user.findUnique({ where: { email: LOCAL_EMAIL } });
  // A server whose data folder predates nothing (no local owner yet): the person is made the owner of a fresh "Local" org.
  if (!local) {
    local = await db.user.create({ data: { email: LOCAL_EMAIL, name: "Local user" } });
    const org = await db.org.upsert({ where: { slug: "local" }, update: {}, create: { slug: "local", name: "Local" } });
    await db.membership.upsert({
      where: { userId_orgId: { userId: local.id, orgId: org.id } },
      update: { role: "owner" },
      create: { userId: local.id, orgId: org.id, role: "owner" },
    });
  }
  const taken = await db.user.findUnique({ where: { email: owner.email } });
  if (taken && taken.id !== local.id) throw new FirstOwnerError("An account with this email already exists.", 409);
  try {
    await db.$transaction([
      db.user.update({ where: { id: local.id }, data: { email: owner.email, name: owner.name, emailVerified: false } }),
      db.authAccount.create({
        data: { userId: local.id, providerId: "credential", accountId: local.id, password: owner.passwordHash },
      }),
    ]);
  } catch (err) {
    if ((err as { code?: string }).code === "P2002")
      throw new FirstOwnerError("This server already has its first account: sign in.", 409);
    throw err;
  }
  return local.id;
}
