// The workspace's uncommitted diff: measured after every write against the diff budget, and
// shown by git_diff. In a git work tree the diff is against HEAD (plus untracked files); outside
// git it is against the content each file had before the runner first wrote it.
import { createTwoFilesPatch } from "diff";
import { readNoFollow } from "./atomic";
import type { WorkspaceFs } from "./fs-at";
import { eachFileUnder } from "./fs-at/files-under";
import { git, gitBlob, type GitHost } from "./git";
import { quoteGitPath } from "./git-quote";

export interface DiffBudget {
  maxBytes: number;
  maxLines: number;
  maxFiles: number;
}
export interface DiffSize {
  bytes: number;
  lines: number;
  files: number;
}

/** How much of a deleted or moved folder is kept for the Changes panel outside git, and how far
 *  it is looked through to count the rest. */
export interface FolderLimits {
  maxFiles: number;
  maxBytes: number;
  maxEntries?: number;
  maxDepth?: number;
}
export const FOLDER_LIMITS = {
  maxFiles: 2_000,
  maxBytes: 32 * 1024 * 1024,
  // About 0.15 s of the runner's event loop, in slices of a few ms; memory stays a few folders' worth.
  maxEntries: 100_000,
  // Deeper than any real project nests; 128 descriptors at most.
  maxDepth: 64,
} satisfies Required<FolderLimits>;

/** Files of a folder left out of the Changes panel; `more`: it was not looked through whole. */
export interface LeftOut {
  files: number;
  more: boolean;
}

export const DEFAULT_BUDGET: DiffBudget = { maxBytes: 2_000_000, maxLines: 20_000, maxFiles: 200 };

export function countPatch(text: string): DiffSize {
  let lines = 0;
  let files = 0;
  for (const line of text.split("\n")) {
    if (line.startsWith("diff --git ")) files++;
    else if ((line.startsWith("+") && !line.startsWith("+++ ")) || (line.startsWith("-") && !line.startsWith("--- ")))
      lines++;
  }
  return { bytes: Buffer.byteLength(text), lines, files };
}

export function overBudget(size: DiffSize, budget: DiffBudget): string | null {
  const parts: string[] = [];
  if (size.bytes > budget.maxBytes) parts.push(`${size.bytes} bytes > ${budget.maxBytes}`);
  if (size.lines > budget.maxLines) parts.push(`${size.lines} changed lines > ${budget.maxLines}`);
  if (size.files > budget.maxFiles) parts.push(`${size.files} files > ${budget.maxFiles}`);
  return parts.length ? parts.join(", ") : null;
}

export class WorkspaceDiff {
  /** Content before the runner's first write of each file (null: it did not exist). Used outside git. */
  private readonly baseline = new Map<string, Buffer | null>();

  constructor(
    private readonly files: WorkspaceFs,
    private readonly host: GitHost,
  ) {}

  rememberBaseline(rel: string, before: Buffer | null): void {
    if (!this.baseline.has(rel)) this.baseline.set(rel, before);
  }

  /**
   * Before a folder is deleted or moved outside git: each file under `rel` keeps what it held
   * (and, moved, its new path counts as new), so the Changes panel lists the folder's files one
   * by one and Discard can put each back. Bounded, since it is held in memory and the agent
   * decides how large a tree is: past `maxFiles`/`maxBytes` files are counted, not read, and the
   * walk stops at `maxEntries` entries or `maxDepth` folders deep (then `more`: the count is a
   * floor). A link is never followed, `rel` itself included.
   */
  async keepFolder(rel: string, movedTo?: string, limits: FolderLimits = FOLDER_LIMITS): Promise<LeftOut> {
    if (await this.inGit()) return { files: 0, more: false };
    let files = 0;
    let bytes = 0;
    let left = 0;
    const walked = await this.files
      .with(rel, {}, (w) =>
        eachFileUnder(
          w.dir,
          w.name,
          {
            maxEntries: limits.maxEntries ?? FOLDER_LIMITS.maxEntries,
            maxDepth: limits.maxDepth ?? FOLDER_LIMITS.maxDepth,
            skip: ".git",
          },
          async (path, read) => {
            // Past the limits nothing more is opened: the rest is only counted.
            const data =
              files < limits.maxFiles && bytes < limits.maxBytes ? await read(limits.maxBytes - bytes) : null;
            if (!data) {
              left++;
              return;
            }
            files++;
            bytes += data.length;
            this.rememberBaseline(`${rel}/${path}`, data);
            if (movedTo !== undefined) this.rememberBaseline(`${movedTo}/${path}`, null);
          },
        ),
      )
      // Unreadable, or gone meanwhile (then the delete or move fails too): what was kept stays.
      .catch(() => ({ complete: false }));
    return { files: left, more: !walked.complete };
  }

  /** How many of the folder's files keepFolder left out (a floor when it stopped short). */
  async rememberFolder(rel: string, movedTo?: string, limits?: FolderLimits): Promise<number> {
    return (await this.keepFolder(rel, movedTo, limits)).files;
  }

  /** A git work tree with a commit that tracks this folder. A workspace inside a folder its
   *  enclosing repository ignores (the default `./.quiver/workspace` in a Quiver checkout) is
   *  not: git would see none of its files, so its changes are kept against the baseline. */
  async inGit(): Promise<boolean> {
    const r = await git(this.host, ["rev-parse", "--verify", "-q", "HEAD"]);
    if (r.code !== 0) return false;
    return (await git(this.host, ["check-ignore", "-q", "."])).code !== 0;
  }

  /** The unified diff, optionally restricted to `paths` (workspace-relative). */
  async text(
    paths?: string[],
    maxBuffer?: number,
  ): Promise<{ text: string; overflow: boolean; mode: "git" | "baseline" }> {
    if (paths && paths.length === 0) return { text: "", overflow: false, mode: "baseline" };
    if (await this.inGit()) {
      const spec = paths ? ["--", ...paths.map((p) => `:(literal)${p}`)] : ["--", "."];
      const tracked = await git(
        this.host,
        // The prefixes are given: a planted diff.noprefix or diff.mnemonicPrefix would change the
        // headers Changes reads a file's path from (`diff --git xxa xxa` read as `a`).
        [
          "diff",
          "HEAD",
          "--no-color",
          "--no-ext-diff",
          "--no-textconv",
          "--no-renames",
          "--src-prefix=a/",
          "--dst-prefix=b/",
          ...spec,
        ],
        { maxBuffer, worktree: true },
      );
      let text = tracked.stdout;
      let overflow = tracked.overflow;
      const untracked = await git(this.host, ["ls-files", "--others", "--exclude-standard", "-z", ...spec]);
      for (const rel of untracked.stdout.split("\0").filter(Boolean)) {
        if (maxBuffer && text.length > maxBuffer) {
          overflow = true;
          break;
        }
        text += await newFilePatch(this.files, rel);
      }
      return { text, overflow, mode: "git" };
    }
    let text = "";
    for (const [rel, before] of this.baseline) {
      if (paths && !paths.some((p) => rel === p || rel.startsWith(`${p}/`))) continue;
      const now = await readCapped(this.files, rel);
      const head = before === null ? "new file mode 100644\n" : now === null ? "deleted file mode 100644\n" : "";
      if (now === "large") {
        text += `${header(rel)}${head}${binaryLine(before ? rel : null, rel)}`;
        continue;
      }
      const a = before?.toString("utf8") ?? "";
      const b = now?.toString("utf8") ?? "";
      if (a === b && (before === null) === (now === null)) continue;
      const from = before ? quoteGitPath("a/", rel) : "/dev/null";
      text += `${header(rel)}${head}${filePatch(from, now ? quoteGitPath("b/", rel) : "/dev/null", a, b)}`;
    }
    return { text, overflow: false, mode: "baseline" };
  }

  /** What `rel` held before the uncommitted changes: at HEAD in git, else before the runner
   *  first wrote it (a file it never wrote: as it is now). null: it did not exist. */
  async original(rel: string): Promise<Buffer | null> {
    if (await this.inGit()) return gitBlob(this.host, `HEAD:${rel}`);
    if (this.baseline.has(rel)) return this.baseline.get(rel) ?? null;
    return (await readNoFollow(this.files, rel).catch(() => null))?.data ?? null;
  }

  async measure(budget: DiffBudget): Promise<DiffSize> {
    const { text, overflow } = await this.text(undefined, budget.maxBytes * 2 + 1024);
    const size = countPatch(text);
    if (overflow) size.bytes = Math.max(size.bytes, budget.maxBytes + 1);
    return size;
  }
}

/** Past this a file's text is not diffed, as a binary file's is not: reading and diffing it on
 *  every write would cost its whole size (a sparse file of gigabytes costs no disk to make). */
export const TEXT_DIFF_MAX_BYTES = 8 * 1024 * 1024;

/** A file's bytes up to TEXT_DIFF_MAX_BYTES, "large" past it, null when it is not a file. */
async function readCapped(files: WorkspaceFs, rel: string): Promise<Buffer | "large" | null> {
  // A link is not followed: git lists a link to a file outside as an untracked file too.
  const r = await files.readFile(rel, { follow: false, maxBytes: TEXT_DIFF_MAX_BYTES }).catch(() => null);
  return r?.kind === "large" ? "large" : r?.kind === "file" ? r.data : null;
}

const header = (rel: string) => `diff --git ${quoteGitPath("a/", rel)} ${quoteGitPath("b/", rel)}\n`;
const binaryLine = (before: string | null, rel: string) =>
  `Binary files ${before === null ? "/dev/null" : quoteGitPath("a/", before)} and ${quoteGitPath("b/", rel)} differ\n`;

async function newFilePatch(files: WorkspaceFs, rel: string): Promise<string> {
  // A name that is not UTF-8 comes back from git with U+FFFD in it, which names no file: it is
  // listed (and counted) unread, not left out.
  if (rel.includes("\uFFFD")) return `${header(rel)}new file mode 100644\n${binaryLine(null, rel)}`;
  const data = await readCapped(files, rel);
  if (data === null) return "";
  const head = `${header(rel)}new file mode 100644\n`;
  if (data === "large" || data.includes(0)) return `${head}${binaryLine(null, rel)}`;
  return `${head}${filePatch("/dev/null", quoteGitPath("b/", rel), "", data.toString("utf8"))}`;
}

/**
 * How long one file's line diff may run. jsdiff's cost grows with the product of the files'
 * length and their difference: two unlike files of 8,000 lines held the runner's event loop
 * (every workspace on it) for 15 s. Past it, the file is shown rewritten whole.
 */
const FILE_DIFF_TIMEOUT_MS = 250;

/** jsdiff's patch without its "====" banner and the tabs it leaves after empty header dates. */
function filePatch(from: string, to: string, a: string, b: string): string {
  const patch = createTwoFilesPatch(from, to, a, b, "", "", { context: 3, timeout: FILE_DIFF_TIMEOUT_MS });
  if (patch === undefined) return rewritePatch(from, to, a, b);
  return patch
    .split("\n")
    .slice(1)
    .map((l) => (l.startsWith("--- ") || l.startsWith("+++ ") ? l.replace(/\t$/, "") : l))
    .join("\n");
}

/** The patch that removes every line of `a` and adds every line of `b` (a diff given up on). */
export function rewritePatch(from: string, to: string, a: string, b: string): string {
  const side = (text: string, mark: string) => {
    if (text === "") return { count: 0, body: "" };
    const lines = text.split("\n");
    const whole = lines[lines.length - 1] === "";
    if (whole) lines.pop();
    const body = lines.map((l) => `${mark}${l}\n`).join("") + (whole ? "" : "\\ No newline at end of file\n");
    return { count: lines.length, body };
  };
  const old = side(a, "-");
  const now = side(b, "+");
  const range = (n: number) => (n === 0 ? "0,0" : `1,${n}`);
  return `--- ${from}\n+++ ${to}\n@@ -${range(old.count)} +${range(now.count)} @@\n${old.body}${now.body}`;
}
