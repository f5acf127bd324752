// Text the line itself puts where a later command of it reads: a file it writes with text it
// shows (`echo 'open evil.com' > s; ftp < s`, `BASH_ENV=s bash -c …`), and the values its
// variables hold in text it prints (`H=evil.com; echo "open $H" | ftp`). The walk (walker.ts)
// also reads what a process substitution on stdin prints and what a function prints. All are
// readings, never exact: a deny or ask rule holds on what they show, no allow rule on them.
import { posix } from "node:path";
import type { Node } from "./parser";
import type { Stdin } from "./stdin";
import { wordOf } from "./words";

/** Variables that name a file a shell runs first (bash's non-interactive `BASH_ENV`, sh's `ENV`). */
export const STARTUP_FILES = /^(BASH_ENV|ENV)$/;

const MAX_FILES = 32;
const MAX_READINGS = 8;
const NAME = /\$(?:\{([A-Za-z_]\w*)\}|([A-Za-z_]\w*))/g;

const operator = (r: Node) => r.children.find((c) => !c.isNamed)?.type ?? "";
const descriptor = (r: Node) => r.children.find((c) => c.type === "file_descriptor")?.text;

/** A file's name as the line's files are kept by: `./s` and `s` are one file. */
export const fileKey = (name: string) => posix.normalize(name.replace(/^(["'])(.*)\1$/s, "$2"));

/** The file a `< name` redirect reads, when its name is static. */
export function inputFile(r: Node): string | undefined {
  if (r.type !== "file_redirect" || operator(r) !== "<" || (descriptor(r) ?? "0") !== "0") return undefined;
  const dest = r.childForFieldName("destination");
  const w = dest && dest.type !== "process_substitution" ? wordOf(dest) : undefined;
  return w && !w.dynamic ? fileKey(w.text) : undefined;
}

/** The process substitution a `< <(…)` redirect reads. */
export function inputSubstitution(r: Node): Node | undefined {
  if (r.type !== "file_redirect" || operator(r) !== "<" || (descriptor(r) ?? "0") !== "0") return undefined;
  const dest = r.childForFieldName("destination");
  return dest?.type === "process_substitution" ? dest : undefined;
}

/** Records what a statement that prints `out` writes into the static files its redirects name. */
export function recordWrites(redirects: readonly Node[], out: Stdin | undefined, files: Map<string, Stdin>) {
  for (const r of redirects) {
    const op = operator(r);
    if (r.type !== "file_redirect" || !/^(>|>\||>>|&>|&>>)$/.test(op) || (descriptor(r) ?? "1") !== "1") continue;
    const dest = r.childForFieldName("destination");
    const w = dest ? wordOf(dest) : undefined;
    if (!w || w.dynamic) continue;
    // What else writes it (a program, a second redirect) is not known: that is no text, so the
    // file's text is only what the line shows, and may be only part of it.
    const key = fileKey(w.text);
    const before = op.endsWith(">>") ? (files.get(key)?.text ?? "") : "";
    if (out && files.size < MAX_FILES) files.set(key, { text: before + out.text, exact: false });
    else if (!out && !op.endsWith(">>")) files.delete(key);
  }
}

/** The words' templates again with each value the line gives the variables in them put in place. */
export function filled(templates: readonly string[], values: ReadonlyMap<string, readonly string[]>): string[][] {
  let most = 0;
  for (const t of templates)
    for (const m of t.matchAll(NAME)) most = Math.max(most, values.get(m[1] ?? m[2])?.length ?? 0);
  return Array.from({ length: Math.min(most, MAX_READINGS) }, (_, i) =>
    templates.map((t) =>
      t.replace(NAME, (whole, braced: string | undefined, plain: string | undefined) => {
        const v = values.get(braced ?? plain ?? "");
        return v && v.length > 0 ? v[Math.min(i, v.length - 1)] : whole;
      }),
    ),
  );
}
