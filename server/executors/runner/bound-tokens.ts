// Remote runners' own tokens: QUIVER_RUNNER_TOKENS (`<runner id>=<token>,…`) and
// QUIVER_RUNNER_TOKENS_FILE (one pair a line), read and checked at boot. Each pair binds a
// runner id to a token, as the local runner's id is bound to its per-start token: the shared
// QUIVER_RUNNER_TOKEN then cannot take that runner's place (and its sessions' calls). Errors name
// the entry by its position, never by its text: a pair written the wrong way round would put the
// secret where the id is expected.
import { closeSync, fstatSync, openSync, readFileSync } from "node:fs";
import { RunnerHello } from "../../protocol/runner";
import type { BoundToken } from "./auth";

export const TOKENS_VAR = "QUIVER_RUNNER_TOKENS";
export const TOKENS_FILE_VAR = "QUIVER_RUNNER_TOKENS_FILE";

/** A configured pair and where it was written ("entry 2", "/etc/quiver/runners line 7"), for messages. */
export interface ConfiguredToken extends BoundToken {
  from: string;
}

export type BindingsResult =
  { ok: true; bindings: ConfiguredToken[] } | { ok: false; variable: string; message: string };

const MIN_TOKEN = 16;
// A file of pairs is a few KiB; a bigger one was named by mistake (a log, a device).
const MAX_FILE_BYTES = 1024 * 1024;
// Bearer tokens are read as \S+ (auth.ts) from a header: anything else could never be presented.
const TOKEN_CHARS = /^[\x21-\x7e]+$/;

class BadEntry extends Error {
  constructor(
    message: string,
    /** The variable to name, when it is not the one being read (a clash found across both). */
    readonly variable?: string,
  ) {
    super(message);
  }
}

/** The variable a pair was configured in. */
export const variableOf = (b: ConfiguredToken) => (b.from.startsWith("entry ") ? TOKENS_VAR : TOKENS_FILE_VAR);

function parsePair(text: string, from: string): ConfiguredToken {
  const eq = text.indexOf("=");
  if (eq < 0) throw new BadEntry(`${from}: must be <runner id>=<token>`);
  const runnerId = text.slice(0, eq).trim();
  const token = text.slice(eq + 1).trim();
  if (!runnerId) throw new BadEntry(`${from}: the runner id before "=" is empty`);
  if (!RunnerHello.shape.runnerId.safeParse(runnerId).success)
    throw new BadEntry(`${from}: the runner id must be one line of at most 200 characters`);
  if (token.length < MIN_TOKEN) throw new BadEntry(`${from}: the token must be at least ${MIN_TOKEN} characters`);
  if (!TOKEN_CHARS.test(token))
    throw new BadEntry(`${from}: the token may hold only printable ASCII characters, no spaces`);
  return { runnerId, token, from };
}

/** The pairs of QUIVER_RUNNER_TOKENS: comma-separated, blank entries (a trailing comma) skipped. */
export function parseTokensVar(value: string): ConfiguredToken[] {
  const out: ConfiguredToken[] = [];
  value.split(",").forEach((entry, i) => {
    if (entry.trim()) out.push(parsePair(entry, `entry ${i + 1}`));
  });
  return out;
}

/** The pairs of a QUIVER_RUNNER_TOKENS_FILE's text: one a line, blank lines and `#` lines skipped. */
export function parseTokensFile(text: string, path: string): ConfiguredToken[] {
  const out: ConfiguredToken[] = [];
  text.split(/\r?\n/).forEach((line, i) => {
    const t = line.trim();
    if (t && !t.startsWith("#")) out.push(parsePair(t, `${path} line ${i + 1}`));
  });
  return out;
}

/** The file's text, refused (as ssh refuses a private key) when other users may read or change it. */
export function readTokensFile(path: string): string {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (err) {
    throw new BadEntry(`cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  try {
    // The descriptor's own mode: the file checked is the file read.
    const st = fstatSync(fd);
    if (!st.isFile()) throw new BadEntry(`${path} is not a regular file`);
    if (process.platform !== "win32" && (st.mode & 0o077) !== 0) {
      const mode = (st.mode & 0o777).toString(8).padStart(4, "0");
      throw new BadEntry(
        `${path} is open to other users (mode ${mode}), and it holds runner tokens: run chmod 600 ${path} (as ssh asks of a private key)`,
      );
    }
    if (st.size > MAX_FILE_BYTES) throw new BadEntry(`${path} is larger than 1 MiB: is it the right file?`);
    return readFileSync(fd, "utf8");
  } finally {
    closeSync(fd);
  }
}

// Characters that show nothing or next to nothing: a claimed id padded with them looks bound.
const INVISIBLE = /[\p{M}\p{Cf}\p{White_Space}\p{Default_Ignorable_Code_Point}]/gu;
// ASCII pairs that read alike in many fonts.
const SAME_GLYPH: Record<string, string> = { "0": "o", "1": "l", i: "l" };

function fold(id: string): string[] {
  return [...id.normalize("NFKD").replace(INVISIBLE, "").toLowerCase()].map((c) => SAME_GLYPH[c] ?? c);
}

/** The form ids are keyed by where look-alikes must be one key (key-store.ts): case, width,
 *  accents, spaces and invisible characters set aside, 0/o and 1/l/i read alike. Non-ASCII
 *  look-alikes ("о" for "o") are not folded here: looksAlike catches them. */
export function foldedId(id: string): string {
  return fold(id).join("");
}

/**
 * Whether `a` and `b` could be taken for one another by a person reading a runner list: equal
 * once case, width, accents, spaces and invisible characters are set aside and 0/o, 1/l/i are
 * read alike, where any non-ASCII character may stand for any other (a Cyrillic "о" for a Latin
 * "o"; no table of look-alikes is complete, so every one counts).
 */
export function looksAlike(a: string, b: string): boolean {
  const x = fold(a);
  const y = fold(b);
  return x.length === y.length && x.every((c, i) => c === y[i] || c > "\x7f" || y[i] > "\x7f");
}

/** The pairs checked against one another and the shared token: no id or token twice, no look-alike ids. */
function crossCheck(bindings: ConfiguredToken[], shared: string | undefined): void {
  bindings.forEach((b, i) => {
    const fail = (message: string) => new BadEntry(message, variableOf(b));
    if (shared !== undefined && b.token === shared)
      throw fail(
        `${b.from}: the token is QUIVER_RUNNER_TOKEN's; a bound token must be one of its own (the shared one connects as any unbound id)`,
      );
    for (const earlier of bindings.slice(0, i)) {
      if (earlier.token === b.token) throw fail(`${earlier.from} and ${b.from} have the same token`);
      if (earlier.runnerId === b.runnerId)
        throw fail(`${earlier.from} and ${b.from} both bind runner ${JSON.stringify(b.runnerId)}`);
      if (looksAlike(earlier.runnerId, b.runnerId))
        throw fail(
          `${earlier.from} and ${b.from} bind runner ids that look alike (${JSON.stringify(earlier.runnerId)}, ${JSON.stringify(b.runnerId)}): give one of them another id`,
        );
    }
  });
}

/**
 * Every configured pair (the variable's, then the file's), or the variable to name and why not.
 * `file` is the path QUIVER_RUNNER_TOKENS_FILE names, already resolved.
 */
export function loadBoundTokens(source: { inline?: string; file?: string; shared?: string }): BindingsResult {
  const bindings: ConfiguredToken[] = [];
  let variable = TOKENS_VAR;
  try {
    if (source.inline !== undefined) bindings.push(...parseTokensVar(source.inline));
    if (source.file !== undefined) {
      variable = TOKENS_FILE_VAR;
      bindings.push(...parseTokensFile(readTokensFile(source.file), source.file));
    }
    crossCheck(bindings, source.shared);
  } catch (err) {
    if (err instanceof BadEntry) return { ok: false, variable: err.variable ?? variable, message: err.message };
    throw err;
  }
  return { ok: true, bindings };
}
