// A checkpoint restore in progress, recorded on the runner's disk beside the shadow repositories
// (QUIVER_CHECKPOINT_DIR, which sandboxed commands cannot see, and outside the shadow folder,
// which git may write): written after the restore's undo is committed and before the first file
// of the workspace changes, removed once the last one has (restore.ts). Only a runner killed in
// between leaves one, and the next runner serving the workspace rolls the restore back before it
// serves anything (recover.ts). Written as a temp fsynced and renamed, its folder fsynced, so a
// power cut leaves the whole record or none; a full disk leaves no temp and changes nothing.
import { createHash, randomBytes } from "node:crypto";
import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { z } from "zod";
import { checkpointRoot, ShadowError } from "./shadow";

const Stored = z.object({
  /** The workspace's path: a record is never applied to another folder. */
  root: z.string(),
  /** The session's ref key (refs/quiver/<key>) the restore committed its undo under. */
  key: z.string().regex(/^[a-z0-9-]{1,64}$/),
  /** The restore's undo: the workspace just before it. */
  undo: z.string().regex(/^[0-9a-f]{40}$/),
  /** Every path the restore was about to change (nothing else is rolled back). */
  paths: z.array(z.string()),
  /** When it began (ms), for the log. */
  at: z.number(),
});
export type RestoreInProgress = z.infer<typeof Stored>;

export function restoreJournalPath(root: string): string {
  return join(checkpointRoot(), "restores", `${createHash("sha256").update(root).digest("hex").slice(0, 32)}.json`);
}

/** Records a restore about to change files; a refusal (nothing changed yet) when it cannot be. */
export function writeRestoreJournal(entry: RestoreInProgress): void {
  const file = restoreJournalPath(entry.root);
  const tmp = `${file}.${randomBytes(6).toString("hex")}.tmp`;
  try {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    const fd = openSync(tmp, "wx", 0o600);
    try {
      writeFileSync(fd, JSON.stringify(entry));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, file);
    syncDir(dirname(file));
  } catch (err) {
    // A full disk cuts the temp short: it must not stay and hold the disk's last room.
    try {
      rmSync(tmp, { force: true });
    } catch {
      /* never made (its folder could not be) */
    }
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === "ENOSPC" || code === "EDQUOT"
        ? `the disk holding the checkpoints (${dirname(file)}) is full (no space left on device)`
        : `it could not be recorded in ${dirname(file)} first: ${(err as Error).message}`;
    throw new ShadowError(`nothing was changed: ${why}`);
  }
}

/** The restore ended (done, or failed file by file with its undo handed back): nothing to roll back. */
export function clearRestoreJournal(root: string): void {
  try {
    rmSync(restoreJournalPath(root), { force: true });
  } catch {
    /* a record that cannot be removed is found at the next start: it is only rolled back then */
  }
}

/** The record a killed runner left for `root`: undefined when none, a reason when it cannot be used. */
export function readRestoreJournal(root: string): RestoreInProgress | { unusable: string } | undefined {
  const file = restoreJournalPath(root);
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    return { unusable: `${file} cannot be read: ${(err as Error).message}` };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { unusable: `${file} is not JSON` };
  }
  const parsed = Stored.safeParse(json);
  if (!parsed.success) return { unusable: `${file} is not a restore record` };
  if (parsed.data.root !== root) return { unusable: `${file} is the record of ${parsed.data.root}` };
  return parsed.data;
}

/** The rename into the folder made durable too (without it a power cut can lose the new name). */
function syncDir(dir: string): void {
  const fd = openSync(dir, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
