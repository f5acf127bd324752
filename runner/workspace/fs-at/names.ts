// The names the runner gives its own short-lived entries inside a workspace, and the exact
// patterns that know them again: a runner killed -9 mid-write or mid-restore leaves them behind,
// and the next runner removes only what matches these (leftovers.ts), never a person's file.
// One place for both, so a name made here can never drift from the pattern that cleans it up.
import { randomBytes } from "node:crypto";

/** Temp files and folders of the runner carry this mark (the watcher ignores them). */
export const TEMP_MARK = ".quiver-";

/** 6 random bytes as hex: a fixed length, so a pattern can demand exactly it. */
const hex = () => randomBytes(6).toString("hex");

/** The temp beside `name` of an atomic write (`tmp`, fd.ts) or of a link put in place (`lnk`, restore.ts). */
export function tempName(name: string, kind: "tmp" | "lnk"): string {
  return `.${name.slice(0, 100)}${TEMP_MARK}${hex()}.${kind}`;
}

/** The folder at the workspace root a checkpoint restore stages its files in (stage.ts). */
export function stageName(): string {
  return `${TEMP_MARK}restore-${hex()}`;
}

/**
 * The name at the workspace root a folder the person deletes is first renamed to (fs-at's
 * removeTreeAtomic): one rename takes the whole folder out of its place, so a kill while its
 * files are then removed leaves this, never a half-deleted folder where the person's was.
 */
export function goneName(): string {
  return `${TEMP_MARK}gone-${hex()}`;
}

/**
 * tempName's output: a dot, 1-100 UTF-16 units of the target's name (a lone surrogate the cut
 * made reads back as one U+FFFD), the mark, 12 hex, the kind. `[\s\S]`: a name may hold a newline.
 */
export const TEMP_NAME = /^\.[\s\S]{1,100}\.quiver-[0-9a-f]{12}\.(tmp|lnk)$/;

/** stageName's output. */
export const STAGE_NAME = /^\.quiver-restore-[0-9a-f]{12}$/;

/** goneName's output. */
export const GONE_NAME = /^\.quiver-gone-[0-9a-f]{12}$/;

/**
 * The same three kinds as gitignore patterns, for the checkpoint shadow's `info/exclude`: a write
 * in progress or a leftover not yet swept while a checkpoint is taken must never be recorded, or
 * a restore would bring it back. Stage and gone folders only ever sit at the workspace root.
 */
const HEX12 = "[0-9a-f]".repeat(12);
export const RUNNER_NAME_GLOBS = [
  `/${TEMP_MARK}restore-${HEX12}`,
  `/${TEMP_MARK}gone-${HEX12}`,
  `.?*${TEMP_MARK}${HEX12}.tmp`,
  `.?*${TEMP_MARK}${HEX12}.lnk`,
];

/** What a stage folder holds: files named by their index in the restore's list. */
export const STAGED_FILE = /^(0|[1-9][0-9]{0,8})$/;
