// Redacted copies of the home's configuration files the sandbox binds back (host-secrets.ts):
// `export GITHUB_TOKEN=…` in ~/.bashrc, a token in a URL or an extraheader of ~/.gitconfig, a
// registry token in ~/.cargo/config.toml. Each is read by the runner, its secret values replaced
// by a marker (the rest intact, so the login shell and git still work) and written 0444 to a
// runner-private folder the sandbox does not see; the copy is bound over the original. It is
// checked again before every sandbox starts and whenever its folder changes, and rewritten when
// the file did. Always a copy, even when nothing looked secret: what the sandbox sees is exactly
// what was checked.
import { createHash } from "node:crypto";
import {
  chmodSync,
  closeSync,
  constants,
  fstatSync,
  mkdtempSync,
  openSync,
  readSync,
  realpathSync,
  rmSync,
  statSync,
  watch as watch_,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { isSecretName } from "./env";

export const REDACTED = "QUIVER-REDACTED";

/** Past this a file is not parsed: its copy holds only a comment saying so. */
export const MAX_REDACT_BYTES = 1 << 20;

const SHELL_FILES = new Set([".profile", ".bash_profile", ".bash_login", ".bashrc", ".bash_aliases", ".bash_logout"]);

/** A shell assignment: `X=`, `export  X=`, `declare -x X=`, `a=1 X+=`, `X[0]=`. */
const ASSIGNMENT = /(^|[\s;&|(`'"])([A-Za-z_][A-Za-z0-9_]*)(\[[^\]\n]*\])?\+?=/g;

/**
 * Where the shell word starting at `i` ends (quotes, escapes, line continuations, `$(…)`); inside
 * a quoted string (`alias x='TOKEN=… cmd'`) also at its closing quote `within`.
 */
function wordEnd(text: string, i: number, within?: string): number {
  let depth = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === within && depth === 0) return i;
    if (c === "\\") i += 2;
    else if (c === "'" || c === "`") {
      const close = text.indexOf(c, i + 1);
      i = close < 0 ? text.length : close + 1;
    } else if (c === '"') {
      i++;
      while (i < text.length && text[i] !== '"') i += text[i] === "\\" ? 2 : 1;
      i++;
    } else if (c === "(") {
      depth++;
      i++;
    } else if (c === ")" && depth > 0) {
      depth--;
      i++;
    } else if (depth === 0 && /[\s;&|<>)]/.test(c)) return i;
    else i++;
  }
  return Math.min(i, text.length);
}

/** Values of shell variables whose name looks secret (env.ts's rule, the same as the scrub's). */
function redactShell(text: string): string {
  let out = "";
  let last = 0;
  ASSIGNMENT.lastIndex = 0;
  for (let m = ASSIGNMENT.exec(text); m; m = ASSIGNMENT.exec(text)) {
    const start = m.index + m[0].length;
    if (!isSecretName(m[2])) {
      ASSIGNMENT.lastIndex = start;
      continue;
    }
    const end = wordEnd(text, start, /['"`]/.test(m[1]) ? m[1] : undefined);
    out += text.slice(last, start) + REDACTED;
    last = end;
    ASSIGNMENT.lastIndex = Math.max(end, start);
  }
  return out + text.slice(last);
}

/** git's `http.extraheader`, npm's `_auth`, and keys named like a secret variable. */
const secretKey = (key: string) => /extraheader|_auth/i.test(key) || isSecretName(key.replace(/[^A-Za-z0-9]/g, "_"));
// The key ends at the first `=` (npm's `//host/:_authToken=`), else at the first `:` (YAML).
const KEY_EQUALS = /^(\s*)([^\s#;[][^=]*?)(\s*=\s*)(.*?)(\r?)$/;
const KEY_COLON = /^(\s*)([^\s#;[][^:]*?)(\s*:\s*)(.*?)(\r?)$/;

/** `key = value` (ini, toml, git config, npmrc, properties) and `key: value` lines. */
function redactKeys(text: string): string {
  const lines = text.split("\n").map((line) => {
    const m = KEY_EQUALS.exec(line) ?? KEY_COLON.exec(line);
    if (!m || !m[4] || !secretKey(m[2])) return line;
    const quote = /^["']/.test(m[4]) ? m[4][0] : "";
    return `${m[1]}${m[2]}${m[3]}${quote}${REDACTED}${quote}${m[5]}`;
  });
  return lines.join("\n");
}

/** Secrets recognised by their shape, wherever they are (an alias, a URL, a comment). */
const SHAPES: [RegExp, string][] = [
  // scheme://user:password@ and https://token@
  [/([a-z][a-z0-9+.-]*:\/\/[^/\s:@'"]*:)[^/\s@'"]+@/gi, `$1${REDACTED}@`],
  [/(https?:\/\/)[^/\s@:'"]+@/gi, `$1${REDACTED}@`],
  [/((?:proxy-)?authorization\s*:\s*(?:(?:bearer|basic|token|digest)\s+)?)[^\s'"\\]+/gi, `$1${REDACTED}`],
  [
    /\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_\w{20,}|glpat-[\w-]{20,}|sk-[\w-]{20,}|xox[abprs]-[\w-]{10,}|AKIA[0-9A-Z]{16}|npm_[A-Za-z0-9]{30,}|AIza[\w-]{30,})/g,
    REDACTED,
  ],
  [/(<(password|passphrase|token|privateKey)>)[^<]*/gi, `$1${REDACTED}`],
  [/-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY-----[\s\S]*?(-----END \1PRIVATE KEY-----|$)/g, REDACTED],
];

/** `text` of the file named `name` with its secret values replaced by REDACTED. */
export function redactText(name: string, text: string): string {
  let out = SHELL_FILES.has(basename(name)) ? redactShell(text) : redactKeys(text);
  for (const [shape, by] of SHAPES) out = out.replace(shape, by);
  return out;
}

/** Up to MAX_REDACT_BYTES + 1 bytes of a regular file (never a FIFO or a device), or undefined. */
function readCapped(path: string): Buffer | undefined {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  } catch {
    return undefined;
  }
  try {
    if (!fstatSync(fd).isFile()) return undefined;
    const buf = Buffer.alloc(MAX_REDACT_BYTES + 1);
    let n = 0;
    for (let r = 1; r > 0 && n < buf.length; n += r) r = readSync(fd, buf, n, buf.length - n, null);
    return buf.subarray(0, n);
  } finally {
    closeSync(fd);
  }
}

interface Copy {
  stamp: string;
  text: string;
}

const copies = new Map<string, Copy>();
const watched = new Map<string, Set<string>>();
let folder: string | undefined;

/** The runner-private folder of the copies (0700, removed when the runner exits). */
export function copiesFolder(): string {
  if (!folder) {
    const made = mkdtempSync(join(tmpdir(), "quiver-home-copies-"));
    folder = made;
    process.once("exit", () => rmSync(made, { recursive: true, force: true }));
  }
  return folder;
}

function stampOf(path: string): string | undefined {
  try {
    const s = statSync(path, { bigint: true });
    return s.isFile() ? `${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}` : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The redacted copy to bind over `target` (a regular file, links followed), made or refreshed
 * now and again whenever its folder changes; undefined when it is not a readable regular file.
 * One copy per target, rewritten in place: a sandbox that bound it (the warm one lives long)
 * sees the file's new content as it saw the original's, and never more than the redacted text.
 */
export function redactedCopy(target: string): string | undefined {
  const source = join(copiesFolder(), createHash("sha256").update(target).digest("hex").slice(0, 24));
  const stamp = stampOf(target);
  const known = copies.get(target);
  if (!stamp) return known ? blank(target, source) : undefined;
  if (known?.stamp === stamp) return source;
  const raw = readCapped(target);
  if (!raw) return known ? blank(target, source) : undefined;
  const text =
    raw.length > MAX_REDACT_BYTES
      ? `# ${basename(target)}: over ${MAX_REDACT_BYTES} bytes, not checked for secrets, so not shown in the sandbox\n`
      : redactText(target, raw.toString("utf8"));
  // A full disk: unchecked is unseen (the caller drops the file; a bound copy keeps its last text).
  if (text !== known?.text && !write(source, text)) return undefined;
  copies.set(target, { stamp, text });
  watch(target);
  return source;
}

/** A target gone or turned into something else (a FIFO): its bound copy reads as empty. */
function blank(target: string, source: string): string | undefined {
  if (!write(source, "")) return undefined;
  copies.set(target, { stamp: "", text: "" });
  return source;
}

function write(source: string, text: string): boolean {
  try {
    chmodSync(source, 0o600);
  } catch {
    /* first write */
  }
  try {
    writeFileSync(source, text, { mode: 0o444 });
    return true;
  } catch {
    return false;
  } finally {
    try {
      chmodSync(source, 0o444);
    } catch {
      /* never written */
    }
  }
}

/** Refreshes the copies of a folder's targets when anything in it changes (links: theirs too). */
function watch(target: string): void {
  let real: string | undefined;
  try {
    real = realpathSync(target);
  } catch {
    real = undefined;
  }
  for (const dir of new Set([dirname(target), ...(real ? [dirname(real)] : [])])) {
    const targets = watched.get(dir);
    if (targets) {
      targets.add(target);
      continue;
    }
    const set = new Set([target]);
    watched.set(dir, set);
    try {
      const w = watch_(dir, { persistent: false }, () => {
        for (const t of set) {
          try {
            redactedCopy(t);
          } catch {
            /* the next sandbox's start checks again */
          }
        }
      });
      w.on("error", () => watched.delete(dir));
    } catch {
      watched.delete(dir);
    }
  }
}
