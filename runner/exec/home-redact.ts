// Redacted copies of the home's configuration files the sandbox binds back (host-secrets.ts):
// `export GITHUB_TOKEN=…` in ~/.bashrc, a token in a URL or an extraheader of ~/.gitconfig, a
// registry token in ~/.cargo/config.toml, `TOKEN=…` in a script of a PATH folder (shell text:
// redact-shell.ts). Each is read by the runner, its secret values replaced by a marker (the rest
// intact, so the login shell, git and the script still work) and written 0444 (0555 when
// executable) to a runner-private folder the sandbox does not see, named by its runner so that
// the next runner removes it when that one was killed -9; the copy is bound in the original's
// place on a tmpfs of the sandbox's own (home-open.ts). It is checked again before every
// sandbox starts and whenever its folder changes, and rewritten when the file did. Always a copy, even when nothing looked secret: what the sandbox sees is exactly
// what was checked.
import { createHash } from "node:crypto";
import {
  chmodSync,
  closeSync,
  constants,
  fstatSync,
  mkdtempSync,
  lstatSync,
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
import { FULL_MARK_PATTERN, processMark, removeLeftoversOfDead } from "../pid-alive";
import { isSecretName } from "./env";
import { REDACTED, redactShell } from "./redact-shell";

export { REDACTED };

/** Past this a file is not parsed: its copy holds only a comment saying so. */
export const MAX_REDACT_BYTES = 1 << 20;

const SHELL_FILES = new Set([".profile", ".bash_profile", ".bash_login", ".bashrc", ".bash_aliases", ".bash_logout"]);

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
    // A quoted value keeps what follows its closing quote (`my $API_KEY = "…";` stays valid Perl).
    const quoted = /^(["'])(?:\\.|(?!\1).)*\1(.*)$/.exec(m[4]);
    if (quoted) return `${m[1]}${m[2]}${m[3]}${quoted[1]}${REDACTED}${quoted[1]}${quoted[2]}${m[5]}`;
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

/** A here-document's body in shell text: data, so `key = value` lines too. */
const shellData = (body: string): string => redactKeys(redactShell(body, shellData));

/**
 * `text` of the file named `name` with its secret values replaced by REDACTED; a `script` (an
 * executable's text, from a PATH folder) by its `#!`: a shell's as shell, any other as both.
 */
export function redactText(name: string, text: string, script = false): string {
  const shell = script
    ? /^(#!\s*\S*\/(env\s+)?(ba|da|k|z|)sh\b|[^#]|#[^!]|$)/.test(text)
    : SHELL_FILES.has(basename(name));
  let out = shell ? redactShell(text, shellData) : script ? redactKeys(redactShell(text, shellData)) : redactKeys(text);
  for (const [shape, by] of SHAPES) out = out.replace(shape, by);
  return out;
}

/** Up to MAX_REDACT_BYTES + 1 bytes of a regular file (never a FIFO or a device; a link only if `follow`). */
function readCapped(
  path: string,
  follow = true,
  max = MAX_REDACT_BYTES + 1,
): { raw: Buffer; mode: number } | undefined {
  let fd: number;
  try {
    fd = openSync(
      path,
      constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY | (follow ? 0 : constants.O_NOFOLLOW),
    );
  } catch {
    return undefined;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return undefined;
    const buf = Buffer.alloc(Math.min(max, st.size + 1));
    let n = 0;
    for (let r = 1; r > 0 && n < buf.length; n += r) r = readSync(fd, buf, n, buf.length - n, null);
    return { raw: buf.subarray(0, n), mode: st.mode };
  } finally {
    closeSync(fd);
  }
}

const elf = new Map<string, { stamp: string; elf: boolean }>();

/** Whether `path` (not a link) is an ELF executable, which a PATH folder shows as it is. */
export function isElf(path: string): boolean {
  const stamp = stampOf(path, false);
  if (!stamp) return false;
  const known = elf.get(path);
  if (known?.stamp === stamp) return known.elf;
  const head = readCapped(path, false, 4);
  const is = !!head && head.raw.equals(Buffer.from("\x7fELF", "latin1"));
  elf.set(path, { stamp, elf: is });
  return is;
}

interface Copy {
  stamp: string;
  text: string;
  mode: number;
}

const copies = new Map<string, Copy & { script: boolean; follow: boolean }>();
const watched = new Map<string, Set<string>>();
let folder: string | undefined;
let swept = false;

const PREFIX = "quiver-home-copies-";
const OWNED = new RegExp(`^${PREFIX}(${FULL_MARK_PATTERN})-[^-]+$`);

/**
 * Removes the copies' folders of runners that are gone (killed -9, no exit handler ran): this
 * user's own folders only, named by an owner that no longer runs, in this PID namespace.
 */
export const removeStaleCopies = (dir = tmpdir()) => removeLeftoversOfDead(dir, OWNED, "folder");

/** Once per process, before its first sandbox: the folders of runners killed before they could. */
export function sweepStaleCopies(): void {
  if (swept) return;
  swept = true;
  removeStaleCopies();
}

/** The runner-private folder of the copies (0700, removed when the runner exits; if killed, by the next). */
export function copiesFolder(): string {
  sweepStaleCopies();
  if (!folder) {
    const mark = processMark();
    const made = mkdtempSync(join(tmpdir(), mark ? `${PREFIX}${mark}-` : PREFIX));
    folder = made;
    process.once("exit", () => rmSync(made, { recursive: true, force: true }));
  }
  return folder;
}

function stampOf(path: string, follow = true): string | undefined {
  try {
    const s = (follow ? statSync : lstatSync)(path, { bigint: true });
    return s.isFile() ? `${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}` : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The redacted copy to bind over `target` (a regular file, links followed unless `follow` is
 * false), made or refreshed now and again whenever its folder changes; undefined when it is not
 * a readable regular file. One copy per target, rewritten in place: a sandbox that bound it (the
 * warm one lives long) sees the file's new content as it saw the original's, and never more than
 * the redacted text. Executable when the target is (a `script` of a PATH folder runs from it).
 */
export function redactedCopy(target: string, how: { script?: boolean; follow?: boolean } = {}): string | undefined {
  const known = copies.get(target);
  const { script = known?.script ?? false, follow = known?.follow ?? true } = how;
  const source = join(copiesFolder(), createHash("sha256").update(target).digest("hex").slice(0, 24));
  const stamp = stampOf(target, follow);
  if (!stamp) return known ? blank(target, source) : undefined;
  if (known?.stamp === stamp) return source;
  const read = readCapped(target, follow);
  if (!read) return known ? blank(target, source) : undefined;
  // latin1: byte for byte, whatever the file's encoding (a script's text stays runnable).
  const text =
    read.raw.length > MAX_REDACT_BYTES
      ? `# ${basename(target)}: over ${MAX_REDACT_BYTES} bytes, not checked for secrets, so not shown in the sandbox\n`
      : redactText(target, read.raw.toString("latin1"), script);
  const mode = read.mode & 0o111 ? 0o555 : 0o444;
  // A full disk: unchecked is unseen (the caller drops the file; a bound copy keeps its last text).
  if ((text !== known?.text || mode !== known.mode) && !write(source, text, mode)) return undefined;
  copies.set(target, { stamp, text, mode, script, follow });
  watch(target);
  return source;
}

/** A target gone or turned into something else (a FIFO): its bound copy reads as empty. */
function blank(target: string, source: string): string | undefined {
  if (!write(source, "", 0o444)) return undefined;
  const k = copies.get(target);
  copies.set(target, { stamp: "", text: "", mode: 0o444, script: k?.script ?? false, follow: k?.follow ?? true });
  return source;
}

function write(source: string, text: string, mode: number): boolean {
  try {
    chmodSync(source, 0o600);
  } catch {
    /* first write */
  }
  try {
    writeFileSync(source, text, { mode, encoding: "latin1" });
    return true;
  } catch {
    return false;
  } finally {
    try {
      chmodSync(source, mode);
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
