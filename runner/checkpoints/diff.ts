// What changed between two snapshots (or one and the work tree now), file by file, as git's
// unified diff: raw entries give the paths, modes and blobs; one patch run is split into its
// per-file sections in the same order (a file that became a link, or the reverse, has two).
import type { CheckpointDiffMeta } from "../../server/protocol/checkpoint-ops";
import { nulList, type ShadowRepo } from "./shadow";
import { snapshotTree } from "./snapshot";

export interface RawEntry {
  path: string;
  status: "A" | "D" | "M" | "T";
  oldMode: string;
  newMode: string;
  oldBlob: string;
  newBlob: string;
  /** A nested repository's commit pointer, not files: never restored or shown. */
  gitlink: boolean;
}

const GITLINK = "160000";
/** The patch text a diff answers with at most; past it, files come without hunks. */
export const MAX_PATCH_BYTES = 16 * 1024 * 1024;

/** `git diff-tree --raw` between two trees. */
export async function rawDiff(shadow: ShadowRepo, from: string, to: string, paths?: string[]): Promise<RawEntry[]> {
  const out = nulList(
    await shadow.ok([
      "diff-tree",
      "-r",
      "-z",
      "--no-renames",
      "--raw",
      from,
      to,
      ...(paths?.length ? ["--", ...paths] : []),
    ]),
  );
  const entries: RawEntry[] = [];
  for (let i = 0; i + 1 < out.length; i += 2) {
    const m = /^:(\d{6}) (\d{6}) ([0-9a-f]{40}) ([0-9a-f]{40}) ([ADMT])/.exec(out[i]);
    if (!m) continue;
    entries.push({
      gitlink: m[1] === GITLINK || m[2] === GITLINK,
      oldMode: m[1],
      newMode: m[2],
      oldBlob: m[3],
      newBlob: m[4],
      status: m[5] as RawEntry["status"],
      path: out[i + 1],
    });
  }
  return entries;
}

export type DiffFile = CheckpointDiffMeta["files"][number] & { patch: string };

export async function diffFiles(
  shadow: ShadowRepo,
  from: string,
  to: string | undefined,
  paths?: string[],
): Promise<{ files: DiffFile[]; truncated: boolean }> {
  const target = to ?? (await snapshotTree(shadow)).tree;
  const raw = await rawDiff(shadow, from, target, paths);
  if (raw.length === 0) return { files: [], truncated: false };
  const spec = paths?.length ? ["--", ...paths] : [];
  const numstat = nulList(
    await shadow.ok(["diff-tree", "-r", "-z", "--no-renames", "--numstat", from, target, ...spec]),
  );
  const binary = new Set(numstat.filter((l) => l.startsWith("-\t-\t")).map((l) => l.slice(4)));
  const patch = await shadow.git(
    [
      "diff-tree",
      "-r",
      "-p",
      "--no-renames",
      "--no-textconv",
      "--no-ext-diff",
      "--no-color",
      "-U3",
      from,
      target,
      ...spec,
    ],
    { maxBuffer: MAX_PATCH_BYTES },
  );
  const truncated = patch.code !== 0;
  const sections = truncated ? [] : splitSections(patch.stdout.toString("utf8"));
  const files: DiffFile[] = [];
  let at = 0;
  for (const e of raw) {
    const take = e.status === "T" ? 2 : 1;
    const text = sections.slice(at, at + take).join("");
    at += take;
    if (e.gitlink) continue;
    const status = e.status === "A" ? "added" : e.status === "D" ? "deleted" : "modified";
    const isLink = e.oldMode === "120000" || e.newMode === "120000";
    files.push({ path: e.path, status, binary: binary.has(e.path) && !isLink, patch: text });
  }
  return { files, truncated };
}

/** A multi-file patch cut at each `diff --git` line. */
function splitSections(text: string): string[] {
  const out: string[] = [];
  let start = -1;
  let i = 0;
  while (i < text.length) {
    if (text.startsWith("diff --git ", i)) {
      if (start >= 0) out.push(text.slice(start, i));
      start = i;
    }
    const nl = text.indexOf("\n", i);
    if (nl < 0) break;
    i = nl + 1;
  }
  if (start >= 0) out.push(text.slice(start));
  return out;
}
