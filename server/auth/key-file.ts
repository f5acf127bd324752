// A key of the data folder (the cookie key, the git credentials' key), made once and kept for
// good, written whole or not at all: the key goes to a temp file beside it, fsynced, then linked
// to its name, which fails when another process made one meanwhile (whose key is then used). A
// plain create-then-write used to leave an empty key file when the disk was full or the process
// was killed between the two, and every later start refused it as damaged until someone deleted
// it by hand. An empty file never held a key (nothing was signed or sealed with it): it is
// replaced. A key file with anything else wrong in it is still refused, never replaced.
import { randomBytes } from "node:crypto";
import {
  closeSync,
  fsyncSync,
  linkSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";

/** A temp this old is a killed process's (a live one links or removes its own within moments). */
const STALE_TEMP_MS = 60_000;

const code = (err: unknown) => (err as NodeJS.ErrnoException).code;

/** The key in `file` (base64url), made when there is none; throws `damaged` for a key `fits` refuses. */
export function loadKeyFile(file: string, fits: (key: Buffer) => boolean, damaged: string): Buffer {
  for (;;) {
    let text: string | undefined;
    try {
      text = readFileSync(file, "utf8");
    } catch (err) {
      if (code(err) !== "ENOENT") throw err;
    }
    if (text !== undefined && text.trim() !== "") {
      const key = Buffer.from(text.trim(), "base64url");
      if (fits(key)) return key;
      throw new Error(damaged);
    }
    create(file, `${randomBytes(32).toString("base64url")}\n`, text !== undefined);
    // Read back: another process's key may have got there first.
  }
}

function create(file: string, content: string, replaceEmpty: boolean): void {
  const dir = dirname(file);
  const prefix = `.${basename(file)}.tmp-`;
  removeStaleTemps(dir, prefix);
  const temp = join(dir, `${prefix}${randomBytes(6).toString("hex")}`);
  try {
    const fd = openSync(temp, "wx", 0o600);
    try {
      writeSync(fd, content);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    try {
      // rename(2) replaces the empty file in one step; two processes starting on it at once may
      // both replace it, and the first one's key is then lost before anything used it for long.
      if (replaceEmpty) renameSync(temp, file);
      else linkSync(temp, file);
    } catch (err) {
      if (code(err) !== "EEXIST") throw err;
    }
    syncDir(dir);
  } finally {
    rmSync(temp, { force: true });
  }
}

function removeStaleTemps(dir: string, prefix: string): void {
  for (const name of readdirSync(dir)) {
    if (!name.startsWith(prefix)) continue;
    const path = join(dir, name);
    try {
      const st = statSync(path);
      if (st.isFile() && Date.now() - st.mtimeMs > STALE_TEMP_MS) rmSync(path, { force: true });
    } catch {
      /* gone meanwhile */
    }
  }
}

/** The new name survives a power cut too (best effort: some file systems refuse a folder's fsync). */
function syncDir(dir: string): void {
  try {
    const fd = openSync(dir, "r");
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    /* not supported here */
  }
}
