// A checkpoint restore a runner killed -9 left half done, rolled back when a runner next serves
// the workspace, before any request is served (served.ts awaits it). The person clicked "Restore
// files", the runner died, and the click answered with an error: the server never heard of the
// restore's undo, so it offers no Undo. Finishing the restore instead would leave them with a
// restored workspace they were told failed and no way back from it; rolling it back leaves the
// files as they were before the click, which is what the error implied, and the click can be
// made again. Only the paths the restore was about to change go back (restore-journal.ts), each
// as the restore's undo commit has it (bytes, exec bit, recorded permission bits); a file nobody
// touched is left as it is now. The rollback is itself a restore (restore.ts) that keeps the
// record until it is done: killed in turn, the next start runs it again, and it writes only what
// still differs from the undo. Then the record goes, whatever came of it: at a later start the
// person may have changed those files since, and nothing must roll them back then.
import type { Workspace } from "../workspace/workspace";
import { shadowOf } from "./ops";
import { restoreTo } from "./restore";
import { clearRestoreJournal, readRestoreJournal } from "./restore-journal";
import { ShadowError } from "./shadow";
import { hasCommit, keyHead } from "./snapshot";

/** Rolls back the restore a killed runner left recorded for `workspace`, if any; never throws. */
export async function recoverRestore(workspace: Workspace, log: (line: string) => void): Promise<void> {
  const found = readRestoreJournal(workspace.root);
  if (!found) return;
  if ("unusable" in found) {
    log(`a checkpoint restore record was left, but ${found.unusable}; left in place, nothing rolled back`);
    return;
  }
  const since = new Date(found.at).toISOString();
  try {
    const shadow = shadowOf(workspace);
    const done = await shadow.serial(async () => {
      if (!(await hasCommit(shadow, found.undo)))
        throw new ShadowError(`its undo ${found.undo} is no longer in ${shadow.dir}`);
      const head = await keyHead(shadow, found.key);
      return restoreTo(shadow, { to: found.undo, dryRun: false, keepPersonEdits: false }, found.key, head, {
        only: new Set(found.paths),
        journal: false,
      });
    });
    if (done.paths.length) workspace.markChanged(done.paths);
    const failed = done.failed ?? [];
    const not = failed.length
      ? `; ${failed.length} could NOT be put back: ${failed
          .slice(0, 20)
          .map((f) => `${f.path} (${f.reason})`)
          .join("; ")}`
      : "";
    log(
      `rolled back a checkpoint restore (begun ${since}) the runner did not finish: ${done.paths.length - failed.length} file(s) put back as they were before it${not}`,
    );
  } catch (err) {
    log(
      `a checkpoint restore (begun ${since}) the runner did not finish could NOT be rolled back: ${(err as Error).message}; the files as they were before it are commit ${found.undo} of the checkpoints`,
    );
  } finally {
    clearRestoreJournal(workspace.root);
  }
}
