// What a deleted session leaves in its workspace's shadow repository: its checkpoints, commits
// kept reachable under refs/quiver/<key>. When the server deletes the session the ref goes, and
// the objects no other session's checkpoint (nor the shadow's index) still reaches are pruned.
// Nothing else ever prunes or drops a packed object (gc.auto is off: a collection mid-snapshot could drop a tree the
// snapshot is about to commit), so without this a workspace's shadow only grew. The prune
// keeps objects younger than a grace period, as git's own does: another runner overlapping on
// the folder for a moment may be between writing a snapshot's objects and naming them in a ref.
// Pruning walks every checkpoint, so one runs at a time per shadow, and one more after it if
// sessions were forgotten while it ran. A deleted workspace's shadow goes whole, with its
// transactions' journals (forgetCheckpointsOf): deleting its folder alone left them for good.
import { rm } from "node:fs/promises";
import { journalDir } from "../checks/journal";
import { packCount } from "./pack";
import { shadowDirOf, type ShadowRepo } from "./shadow";

/** Objects this recent are kept by a prune (git's approxidate). */
export const PRUNE_GRACE = "10.minutes.ago";

const pruning = new WeakMap<ShadowRepo, { again: boolean; done: Promise<void> }>();

/** Removes the session's ref; false when it had none (no checkpoint, or already forgotten). */
export async function dropSessionRef(shadow: ShadowRepo, key: string): Promise<boolean> {
  const ref = `refs/quiver/${key}`;
  const had = (await shadow.git(["rev-parse", "-q", "--verify", ref])).code === 0;
  if (had) await shadow.ok(["update-ref", "-d", ref]);
  return had;
}

/**
 * Prunes what nothing reaches any more; resolves when a prune that started after this call has
 * ended. Failures are the caller's to report; the shadow is left as a partial prune leaves it
 * (git removes objects one by one, only unreachable ones).
 */
export function pruneShadow(shadow: ShadowRepo, expire = PRUNE_GRACE): Promise<void> {
  const running = pruning.get(shadow);
  if (running) {
    running.again = true;
    return running.done;
  }
  const state = { again: false, done: Promise.resolve() };
  state.done = (async () => {
    try {
      do {
        state.again = false;
        // Packed objects (pack.ts) are out of prune's reach: a repack drops those nothing reaches
        // that are older than the grace and leaves the younger ones loose for prune's own check.
        // In the shadow's turn, so that it never runs beside the packing after a checkpoint.
        if (packCount(shadow) > 0)
          await shadow.serial(() => shadow.ok(["repack", "-A", "-d", "-q", `--unpack-unreachable=${expire}`]));
        await shadow.ok(["prune", `--expire=${expire}`]);
      } while (state.again);
    } finally {
      pruning.delete(shadow);
    }
  })();
  pruning.set(shadow, state);
  return state.done;
}

/** Removes the shadow repository and journals of the workspace that was at `root`. Only for a
 *  workspace whose id is never used again: a folder made there later would find none. */
export async function forgetCheckpointsOf(root: string): Promise<void> {
  // The runner's own folders, out of every sandbox's reach: no link of the agent's is in them.
  await rm(shadowDirOf(root), { recursive: true, force: true });
  await rm(journalDir(root), { recursive: true, force: true });
}
