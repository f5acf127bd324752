// Which files the person changed by hand: every save, upload, new folder, rename, delete and
// replace made through the IDE's file operations (runner/files/person.ts) is appended, with the
// runner's clock, to a log in the workspace's shadow folder (outside the workspace, so the agent
// cannot write it). A restore keeps the files the person edited after its checkpoint was made.
// Edits typed in a terminal are not told apart from the agent's commands, and are not in it.
import { appendFileSync, readFileSync } from "node:fs";
import { join } from "node:path";

const LOG = "person-edits.log";

export function recordPersonEdits(shadowDir: string, paths: string[], at = Date.now()): void {
  if (paths.length === 0) return;
  appendFileSync(join(shadowDir, LOG), paths.map((p) => `${at}\t${JSON.stringify(p)}\n`).join(""));
}

/** Paths (files or folders) the person changed after `since` (ms), as the log has them. */
export function editedSince(shadowDir: string, since: number): string[] {
  let text: string;
  try {
    text = readFileSync(join(shadowDir, LOG), "utf8");
  } catch {
    return [];
  }
  const out = new Set<string>();
  for (const line of text.split("\n")) {
    const tab = line.indexOf("\t");
    if (tab < 0 || Number(line.slice(0, tab)) <= since) continue;
    try {
      out.add(JSON.parse(line.slice(tab + 1)) as string);
    } catch {
      /* a line a kill cut short */
    }
  }
  return [...out];
}
