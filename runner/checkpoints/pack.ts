// Packs the shadow's loose objects. Each checkpoint stores every changed file as a loose object
// (a file of its own: an inode and at least a block), and git's automatic gc is off in the shadow
// (it would start at random moments and detach, and a detached git dies with its sandbox), so a
// long session left tens of thousands of small files behind. After a checkpoint, when git's own
// estimate (the entries of one of the 256 object folders, times 256) passes git's own default
// threshold, the loose objects are packed into one pack and their loose copies removed; past
// PACK_LIMIT packs they are merged into one. Nothing is ever dropped here: unreachable objects
// stay (pruning them is forget.ts's, with its grace), so a pack never loses what an undo needs.
import { readdirSync } from "node:fs";
import { join } from "node:path";
import type { ShadowRepo } from "./shadow";

/** git's gc.auto default: about this many loose objects make a pack worth it. */
export const LOOSE_LIMIT = 6_700;
/** git's gc.autoPackLimit default. */
export const PACK_LIMIT = 50;

const count = (dir: string, test: (name: string) => boolean) => {
  try {
    return readdirSync(dir).filter(test).length;
  } catch {
    return 0;
  }
};

/** About how many loose objects the shadow holds (git's own sampling of objects/17). */
export function looseEstimate(shadow: ShadowRepo): number {
  return count(join(shadow.dir, "objects", "17"), (n) => /^[0-9a-f]{38}$/.test(n)) * 256;
}

export function packCount(shadow: ShadowRepo): number {
  return count(join(shadow.dir, "objects", "pack"), (n) => n.endsWith(".pack"));
}

/** Packs when there is enough to pack; true when it did. Runs in the shadow's turn (serial). */
export async function packIfDue(shadow: ShadowRepo): Promise<boolean> {
  if (looseEstimate(shadow) <= LOOSE_LIMIT) return false;
  const merge = packCount(shadow) >= PACK_LIMIT;
  // -d: loose copies of what was packed go; --keep-unreachable (with -a): nothing is dropped.
  await shadow.ok(["repack", "-d", "-q", ...(merge ? ["-a", "--keep-unreachable"] : [])]);
  return true;
}
