// The folders of a masked home that the sandbox shows again (host-secrets.ts), each as an empty
// read-only tmpfs with its entries bound back one by one, instead of one bind of the host's
// folder: a mask or a redacted copy inside a bind of the host's folder sits on the host's file,
// and a host that renames a new file over it (an editor's save, `cargo login`) detaches that
// mount, so a warm sandbox would show the new raw file. Here every mount point is the sandbox's
// own (a host rename changes nothing it shows until its next start), a credential file is simply
// absent, and a file the host creates later is not there. Entries: a subfolder bound whole, a
// link made again as the same link, a file as it is or as its redacted copy (home-redact.ts); in
// a PATH folder of the home every file is a redacted copy but an ELF executable, which runs as it
// is, and no subfolder is shown.
import { lstatSync, readdirSync, readlinkSync, type Dirent } from "node:fs";
import { dirname, join } from "node:path";
import { isElf, redactedCopy } from "./home-redact";

/** Past this many entries in one folder the rest are not shown (each is a mount). */
export const MAX_ENTRIES = 2000;

export interface Opened {
  /** Folders made empty tmpfs (sandbox hide), parents first. */
  folders: string[];
  /** Entries bound back as they are. */
  reveal: string[];
  /** Entries bound back as redacted copies. */
  substitute: { source: string; target: string }[];
  /** Links made again in the tmpfs (`target` is the link's text). */
  links: { target: string; at: string }[];
}

export interface OpenInput {
  /** The folders shown again (real paths, none inside another). */
  roots: string[];
  /** Folders below a root shown entry by entry too (their parents up to the root are). */
  inner: string[];
  /** Folders whose files are all redacted copies (ELF executables as they are), no subfolder shown. */
  redactAll: (dir: string) => boolean;
  /** A file not shown at all (a credential file). */
  masked: (file: string) => boolean;
  /** A file shown as its redacted copy (a configuration file). */
  redacted: (file: string) => boolean;
}

const within = (path: string, dir: string) => path === dir || path.startsWith(`${dir}/`);

function entries(dir: string): Dirent[] {
  try {
    return readdirSync(dir, { withFileTypes: true }).slice(0, MAX_ENTRIES);
  } catch {
    return [];
  }
}

/** What to mount for `o.roots` and the folders below them in `o.inner`. */
export function openFolders(o: OpenInput): Opened {
  const open = new Set(o.roots);
  for (const dir of o.inner) {
    const root = o.roots.find((r) => within(dir, r));
    for (let d = dir; root && within(d, root) && !open.has(d); d = dirname(d)) open.add(d);
  }
  const out: Opened = { folders: [...open].sort((a, b) => a.length - b.length), reveal: [], substitute: [], links: [] };
  for (const dir of out.folders) {
    const all = o.redactAll(dir);
    for (const e of entries(dir)) {
      const path = join(dir, e.name);
      if (open.has(path)) continue;
      if (e.isSymbolicLink()) {
        try {
          out.links.push({ target: readlinkSync(path), at: path });
        } catch {
          /* gone */
        }
      } else if (e.isDirectory()) {
        if (!all) out.reveal.push(path);
      } else if (e.isFile() && !o.masked(path)) {
        if (all ? isElf(path) : !o.redacted(path)) out.reveal.push(path);
        else {
          // Read without following a link: one planted in its place shows nothing.
          const source = redactedCopy(path, { script: all, follow: false });
          if (source) out.substitute.push({ source, target: path });
        }
      }
      // A socket, FIFO or device is not shown.
    }
  }
  return out;
}

/** The folders a pattern's path (`*`: any one name) passes through under `base` that exist. */
export function patternFolders(base: string, rel: string): string[] {
  const found: string[] = [];
  let paths = [base];
  for (const part of rel.split("/").slice(0, -1)) {
    paths = paths.flatMap((p) => (part === "*" ? names(p).map((n) => join(p, n)) : [join(p, part)])).filter(isDir);
    found.push(...paths);
  }
  return found;
}

/** Whether `file` is a pattern's path under `base` (`*`: any one name). */
export function matches(base: string, rel: string, file: string): boolean {
  const want = rel.split("/");
  const got = file.slice(base.length + 1).split("/");
  return file.startsWith(`${base}/`) && got.length === want.length && want.every((w, i) => w === "*" || w === got[i]);
}

function names(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

function isDir(path: string): boolean {
  try {
    return lstatSync(path).isDirectory();
  } catch {
    return false;
  }
}
