// What a checkpoint left out, asked of the checkpoint itself rather than of the work tree now: a
// restore must not delete a file only because the agent changed the ignore rules since (`rm
// .gitignore`, a `!.env` line, a nested .gitignore removed), which makes the person's ignored
// .env show up in the snapshot of now and not in the target. A path is left out by a checkpoint
// when its own notes name it (over the size cap, a nested repository: snapshot.ts) or when the
// .gitignore files as they were in its tree ignore it: those are written to a scratch folder in
// the shadow (never the workspace) and `git check-ignore --no-index` asked there, which applies
// git's rules exactly (nesting, negations, folder patterns) as the snapshot's `ls-files` did.
// The shadow's info/exclude is empty and core.excludesFile is /dev/null, as for the snapshot.
import { randomBytes } from "node:crypto";
import { closeSync, fsyncSync, mkdirSync, openSync, rmSync, writeSync } from "node:fs";
import { dirname, join } from "node:path";
import { catBlobs } from "./stage";
import { nulList, ShadowError, type ShadowRepo } from "./shadow";
import { commitNotes } from "./snapshot";

/**
 * Whether `path` is one of `tops` or lies under one of them (a folder): a lookup per folder above
 * it rather than a pass over `tops` for each path (20,000 notes by 20,000 paths took 36 s).
 */
export function underAny(tops: ReadonlySet<string>, path: string): boolean {
  if (tops.has(path)) return true;
  for (let cut = path.indexOf("/"); cut >= 0; cut = path.indexOf("/", cut + 1))
    if (tops.has(path.slice(0, cut))) return true;
  return false;
}

/** The paths among `candidates` that checkpoint `target` left out (so a restore to it leaves them alone). */
export async function leftOutBy(shadow: ShadowRepo, target: string, candidates: string[]): Promise<Set<string>> {
  const out = new Set<string>();
  if (candidates.length === 0) return out;
  const notes = new Set((await commitNotes(shadow, target)).leftOut);
  for (const p of candidates) if (underAny(notes, p)) out.add(p);
  const rest = candidates.filter((p) => !out.has(p));
  if (rest.length === 0) return out;
  const ignores = nulList(await shadow.ok(["ls-tree", "-r", "-z", "--full-tree", target]))
    .map((line) => /^(\d{6}) blob ([0-9a-f]{40})\t([\s\S]*)$/.exec(line))
    // git reads a .gitignore that is a link no more (2.32+), so a link's target is no rule.
    .filter((m): m is RegExpExecArray => !!m && m[1] !== "120000" && /(^|\/)\.gitignore$/.test(m[3]));
  if (ignores.length === 0) return out;
  const scratch = join(shadow.dir, `ignore-${randomBytes(6).toString("hex")}`);
  mkdirSync(scratch, { mode: 0o700 });
  try {
    let fd = -1;
    await catBlobs(
      shadow,
      ignores.map((m) => m[2]),
      {
        open(i) {
          // Tree paths have no `..` or empty component (git refuses them in an index): they stay in scratch.
          const file = join(scratch, ignores[i][3]);
          mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
          fd = openSync(file, "wx", 0o600);
        },
        data: (chunk) => void writeSync(fd, chunk),
        close() {
          fsyncSync(fd);
          // Forgotten first: a failed close released the number all the same (see stage.ts).
          const done = fd;
          fd = -1;
          closeSync(done);
        },
      },
    ).finally(() => {
      if (fd >= 0) closeSync(fd);
    });
    // "./" keeps a name like ":(glob)x" from being read as pathspec magic, which check-ignore refuses.
    const r = await shadow.git(["check-ignore", "--no-index", "-z", "--stdin"], {
      dir: scratch,
      literal: false,
      input: rest.map((p) => `./${p}`).join("\0") + "\0",
    });
    // 0: some are ignored, 1: none is; anything else is git's failure, and nothing is deleted then.
    if (r.code !== 0 && r.code !== 1)
      throw new ShadowError(`git check-ignore failed: ${r.stderr.trim().split("\n").slice(-3).join(" ")}`);
    for (const p of nulList(r.stdout)) out.add(p.startsWith("./") ? p.slice(2) : p);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  return out;
}
