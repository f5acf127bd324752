// The workspace's uncommitted diff: measured after every write against the diff budget, and
// shown by git_diff. In a git work tree the diff is against HEAD (plus untracked files); outside
// git it is against the content each file had before the runner first wrote it.
import { execFile } from "node:child_process";
import { lstat, readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { createTwoFilesPatch } from "diff";
import { readNoFollow } from "./atomic";

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

/** How much of a deleted or moved folder is kept for the Changes panel outside git. */
export const FOLDER_LIMITS = { maxFiles: 2_000, maxBytes: 32 * 1024 * 1024 };

export const DEFAULT_BUDGET: DiffBudget = { maxBytes: 2_000_000, maxLines: 20_000, maxFiles: 200 };

// Repository config could name programs git would run (fsmonitor, external diff, hooks): off.
const SAFE_GIT = ["-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null", "-c", "diff.external=", "-c", "core.quotepath=false"];

interface GitOut {
  code: number;
  stdout: string;
  overflow: boolean;
}

/** git in `root` with repository-configured programs (hooks, fsmonitor, external diff) off. */
export function git(root: string, args: string[], maxBuffer = 64 * 1024 * 1024): Promise<GitOut & { stderr: string }> {
  return new Promise((resolve) => {
    execFile("git", [...SAFE_GIT, ...args], { cwd: root, maxBuffer, encoding: "utf8", env: { ...process.env, GIT_OPTIONAL_LOCKS: "0" } }, (err, stdout, stderr) => {
      const e = err as (NodeJS.ErrnoException & { code?: number | string }) | null;
      if (e && e.code === "ERR_CHILD_PROCESS_STDIO_MAXBUFFER") return resolve({ code: 0, stdout: String(stdout), stderr: String(stderr), overflow: true });
      resolve({ code: e ? (typeof e.code === "number" ? e.code : 1) : 0, stdout: String(stdout), stderr: String(stderr), overflow: false });
    });
  });
}

/** A blob's bytes (`HEAD:path`); null when there is none. */
function gitBlob(root: string, spec: string): Promise<Buffer | null> {
  return new Promise((resolve) => {
    execFile("git", [...SAFE_GIT, "cat-file", "blob", spec], { cwd: root, maxBuffer: 64 * 1024 * 1024, encoding: "buffer", env: { ...process.env, GIT_OPTIONAL_LOCKS: "0" } }, (err, stdout) =>
      resolve(err ? null : stdout),
    );
  });
}

export function countPatch(text: string): DiffSize {
  let lines = 0;
  let files = 0;
  for (const line of text.split("\n")) {
    if (line.startsWith("diff --git ")) files++;
    else if ((line.startsWith("+") && !line.startsWith("+++ ")) || (line.startsWith("-") && !line.startsWith("--- "))) lines++;
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

  constructor(private readonly root: string) {}

  rememberBaseline(rel: string, before: Buffer | null): void {
    if (!this.baseline.has(rel)) this.baseline.set(rel, before);
  }

  /**
   * Before a folder is deleted or moved outside git: each file under `rel` keeps what it held
   * (and, moved, its new path counts as new), so the Changes panel lists the folder's files one
   * by one and Discard can put each back. Bounded, since it is held in memory: past the limits
   * the remaining files are not recorded. Returns how many files were left out.
   */
  async rememberFolder(rel: string, movedTo?: string, limits = FOLDER_LIMITS): Promise<number> {
    if (await this.inGit()) return 0;
    let files = 0;
    let bytes = 0;
    let skipped = 0;
    const walk = async (dirRel: string): Promise<void> => {
      const entries = await readdir(join(this.root, dirRel), { withFileTypes: true }).catch(() => []);
      for (const e of entries) {
        const childRel = `${dirRel}/${e.name}`;
        if (e.isDirectory()) {
          if (e.name !== ".git") await walk(childRel);
          continue;
        }
        if (!e.isFile()) continue;
        const size = (await lstat(join(this.root, childRel)).catch(() => null))?.size ?? 0;
        if (files >= limits.maxFiles || bytes + size > limits.maxBytes) {
          skipped++;
          continue;
        }
        const data = await readNoFollow(join(this.root, childRel)).catch(() => null);
        if (!data) continue;
        files++;
        bytes += data.data.length;
        this.rememberBaseline(childRel, data.data);
        if (movedTo !== undefined) this.rememberBaseline(movedTo + childRel.slice(rel.length), null);
      }
    };
    await walk(rel);
    return skipped;
  }

  /** A git work tree with a commit that tracks this folder. A workspace inside a folder its
   *  enclosing repository ignores (the default `./.quiver/workspace` in a Quiver checkout) is
   *  not: git would see none of its files, so its changes are kept against the baseline. */
  async inGit(): Promise<boolean> {
    const r = await git(this.root, ["rev-parse", "--verify", "-q", "HEAD"]);
    if (r.code !== 0) return false;
    return (await git(this.root, ["check-ignore", "-q", "."])).code !== 0;
  }

  /** The unified diff, optionally restricted to `paths` (workspace-relative). */
  async text(paths?: string[], maxBuffer?: number): Promise<{ text: string; overflow: boolean; mode: "git" | "baseline" }> {
    if (paths && paths.length === 0) return { text: "", overflow: false, mode: "baseline" };
    if (await this.inGit()) {
      const spec = paths ? ["--", ...paths.map((p) => `:(literal)${p}`)] : ["--", "."];
      const tracked = await git(this.root, ["diff", "HEAD", "--no-color", "--no-ext-diff", "--no-renames", ...spec], maxBuffer);
      let text = tracked.stdout;
      let overflow = tracked.overflow;
      const untracked = await git(this.root, ["ls-files", "--others", "--exclude-standard", "-z", ...spec]);
      for (const rel of untracked.stdout.split("\0").filter(Boolean)) {
        if (maxBuffer && text.length > maxBuffer) {
          overflow = true;
          break;
        }
        text += await newFilePatch(this.root, rel);
      }
      return { text, overflow, mode: "git" };
    }
    let text = "";
    for (const [rel, before] of this.baseline) {
      if (paths && !paths.some((p) => rel === p || rel.startsWith(`${p}/`))) continue;
      const now = await readNoFollow(join(this.root, rel)).catch(() => null);
      const a = before?.toString("utf8") ?? "";
      const b = now?.data.toString("utf8") ?? "";
      if (a === b && (before === null) === (now === null)) continue;
      const head = before === null ? "new file mode 100644\n" : now === null ? "deleted file mode 100644\n" : "";
      text += `diff --git a/${rel} b/${rel}\n${head}${filePatch(before ? `a/${rel}` : "/dev/null", now ? `b/${rel}` : "/dev/null", a, b)}`;
    }
    return { text, overflow: false, mode: "baseline" };
  }

  /** What `rel` held before the uncommitted changes: at HEAD in git, else before the runner
   *  first wrote it (a file it never wrote: as it is now). null: it did not exist. */
  async original(rel: string): Promise<Buffer | null> {
    if (await this.inGit()) return gitBlob(this.root, `HEAD:${rel}`);
    if (this.baseline.has(rel)) return this.baseline.get(rel) ?? null;
    return (await readNoFollow(join(this.root, rel)).catch(() => null))?.data ?? null;
  }

  async measure(budget: DiffBudget): Promise<DiffSize> {
    const { text, overflow } = await this.text(undefined, budget.maxBytes * 2 + 1024);
    const size = countPatch(text);
    if (overflow) size.bytes = Math.max(size.bytes, budget.maxBytes + 1);
    return size;
  }
}

async function newFilePatch(root: string, rel: string): Promise<string> {
  const abs = join(root, rel);
  const st = await stat(abs).catch(() => null);
  if (!st?.isFile()) return "";
  const data = await readFile(abs);
  if (data.includes(0)) return `diff --git a/${rel} b/${rel}\nnew file mode 100644\nBinary files /dev/null and b/${rel} differ\n`;
  return `diff --git a/${rel} b/${rel}\nnew file mode 100644\n${filePatch("/dev/null", `b/${rel}`, "", data.toString("utf8"))}`;
}

/** jsdiff's patch without its "====" banner and the tabs it leaves after empty header dates. */
function filePatch(from: string, to: string, a: string, b: string): string {
  const patch = createTwoFilesPatch(from, to, a, b, "", "", { context: 3 });
  return patch
    .split("\n")
    .slice(1)
    .map((l) => (l.startsWith("--- ") || l.startsWith("+++ ") ? l.replace(/\t$/, "") : l))
    .join("\n");
}
