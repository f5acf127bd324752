// The unified diff of one file's change, with the file's real line numbers and 3 lines of
// context: what an approval card shows before an edit or write (preview.ts) and what its tool
// card shows after (edit.ts). Bounded here, where the before and after texts are, so a huge write
// never ships megabytes into the session's event log: past the cap the diff is cut on a line
// boundary and a last line says how much was left out.
import { createTwoFilesPatch } from "diff";

/** The most of an applied diff that travels to the server, for its tool card. */
export const DIFF_MAX_CHARS = 20_000;
/** The most of a proposed change that travels, for its approval card: the card shows 20,000
 *  characters and keeps the rest for "show the whole change", so a person can read what they
 *  approve. Bounded still: the runner's channel carries at most 64 MiB a message. */
export const PREVIEW_DIFF_MAX_CHARS = 4 * 1024 * 1024;
/** Comparing two large, very different texts can take long; past this the diff is not shown. */
const DIFF_TIMEOUT_MS = 2_000;

/** The cap's marker line starts with this, so a viewer can tell it from the diff's own lines. */
export const DIFF_CUT_MARK = "… diff cut:";

/** `before` null: the file is created; `after` null: it is deleted. */
export function changeDiff(
  rel: string,
  before: string | null,
  after: string | null,
  maxChars = DIFF_MAX_CHARS,
): string {
  const oldName = before === null ? "/dev/null" : `a/${rel}`;
  const newName = after === null ? "/dev/null" : `b/${rel}`;
  const patch = createTwoFilesPatch(oldName, newName, before ?? "", after ?? "", undefined, undefined, {
    context: 3,
    timeout: DIFF_TIMEOUT_MS,
  });
  if (patch === undefined)
    return `--- ${oldName}\n+++ ${newName}\n${DIFF_CUT_MARK} the change is too large to compare; the whole diff is not shown\n`;
  // The "====" separator line says nothing on a card.
  return capDiff(patch.replace(/^=+\n/, ""), maxChars);
}

/** The diff itself when it fits; otherwise its first whole lines and a marker line. */
export function capDiff(diff: string, maxChars = DIFF_MAX_CHARS): string {
  if (diff.length <= maxChars) return diff;
  const end = diff.lastIndexOf("\n", maxChars);
  const kept = diff.slice(0, end > 0 ? end + 1 : maxChars);
  const rest = diff.slice(kept.length);
  const lines = rest.split("\n").length - (rest.endsWith("\n") ? 1 : 0);
  return `${kept}${DIFF_CUT_MARK} ${lines} more line${lines === 1 ? "" : "s"} (${rest.length} characters) not shown\n`;
}
