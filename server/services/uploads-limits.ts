// The org's disk limit for each of its workspaces (Org.diskLimitMb; null: 5 GB), read where a
// workspace is created or measured, and set by the org's owners and admins (audited).
import type { Db } from "../db";
import type { Actor } from "./types";
import { DEFAULT_UPLOAD_MAX_BYTES } from "./uploads";

export const DEFAULT_DISK_LIMIT_MB = 5 * 1024;
/** 1 MB to 16 TB: a limit outside that is a typo. */
export const DISK_LIMIT_MB_RANGE = { min: 1, max: 16 * 1024 * 1024 } as const;

export interface DiskLimitInfo {
  limitBytes: number;
  /** null: the org uses the default. */
  limitMb: number | null;
  defaultMb: number;
  uploadMaxBytes: number;
}

export async function diskLimitOf(db: Db, orgId: string): Promise<DiskLimitInfo> {
  const org = await db.org.findUnique({ where: { id: orgId }, select: { diskLimitMb: true } });
  const limitMb = org?.diskLimitMb ?? null;
  return {
    limitBytes: (limitMb ?? DEFAULT_DISK_LIMIT_MB) * 1024 ** 2,
    limitMb,
    defaultMb: DEFAULT_DISK_LIMIT_MB,
    uploadMaxBytes: DEFAULT_UPLOAD_MAX_BYTES,
  };
}

/** Sets (null: back to the default) the limit of the actor's org; the caller checked the actor is an admin. */
export async function setDiskLimit(db: Db, actor: Actor, limitMb: number | null): Promise<DiskLimitInfo> {
  const before = await diskLimitOf(db, actor.orgId);
  await db.$transaction([
    db.org.update({ where: { id: actor.orgId }, data: { diskLimitMb: limitMb } }),
    db.auditEvent.create({
      data: {
        orgId: actor.orgId,
        actorId: actor.userId,
        action: "org.disk_limit.set",
        target: `org:${actor.orgId}`,
        detail: { from: before.limitMb, to: limitMb },
      },
    }),
  ]);
  return diskLimitOf(db, actor.orgId);
}
