// Pieces the client readers share (hosts-clients.ts, hosts-ssh.ts, hosts-git.ts): what a reader
// returns, the forms of a destination that has no scheme (`[user@]host:path`, `host:port`), and
// options read up to the first word only known at run time, since what stands before that word
// is passed to the program whatever the word becomes.
import { getopt, getoptPermuted, type OptionSpec, type ParsedOption } from "../shell/getopt";
import type { Word } from "../shell/types";
import { expandWord } from "./hosts-words";

/** The URLs a command certainly reaches, and why there may be more the policy cannot list. */
export interface Reach {
  urls: string[];
  unsure?: string;
}

/** Reads a command string a client hands a shell (or splits into words) as a script. */
export type Nested = (text: string) => Reach;

export const SCHEME = /^[a-z][a-z0-9+.-]*:\/\//i;

/** `text` as a URL a client given it without a scheme fetches (curl, wget and git's proxies
 *  default to http). */
export const asUrl = (text: string) => (SCHEME.test(text) ? text : `http://${text}`);

/** A host as written (`evil.com`, `[::1]`, `::1`, `2852039166`) as an ssh URL whose host it is. */
export function hostUrl(host: string): string | undefined {
  // ssh and curl take a name in brackets too (`-W [evil.com]:22`): only an address keeps them.
  const name = /^\[([^:\]]*)\]$/.exec(host)?.[1] ?? host;
  // An IPv6 address needs brackets in a URL; one colon is a port.
  const h = name.startsWith("[") ? name : name.split(":").length > 2 ? `[${name}]` : name;
  return h && !/[\s/]/.test(h) ? `ssh://${h}` : undefined;
}

/** `[user@]host[:port]` (an ssh destination, a jump host), or a URL, as a URL of that host. */
export const destination = (text: string) => (SCHEME.test(text) ? text : `ssh://${text}`);

/** The texts of words bash passes as written: static ones, and a glob with no quote or
 *  expansion in it (`a:80:[::ffff:a9fe:a9fe]`, `[::1]:x`), which bash passes as it stands when
 *  no file matches, as one would not. */
export const staticTexts = (ws: readonly (Word | undefined)[]) => ws.flatMap((w) => (w && literal(w) ? [w.text] : []));

// Braces are bash's expansion, not a glob: such a word is read in hosts.ts and asked about.
const literal = (w: Word) => !w.dynamic || (!!w.globOnly && /^[^'"\\$`{}~]*$/.test(w.text));

export const valuesOf = (options: readonly ParsedOption[], ...names: string[]) =>
  staticTexts(options.filter((o) => names.includes(o.name)).map((o) => o.value));

// scp's, sftp's and rsync's remote form: `[user@]host:path` (`host::module` for rsync), a colon
// with no slash before it; the host may be an address in brackets.
const REMOTE = /^(?:[^/@]*@)?(\[[^\]/]*\]|[^/:@[\]]+):/;

/** The host of a remote file spec (`user@evil.com:/x`, `evil.com::m`), as an ssh URL. */
export function remoteSpec(text: string): string | undefined {
  if (SCHEME.test(text)) return text;
  const m = REMOTE.exec(text);
  return m ? hostUrl(m[1]) : undefined;
}

/** `host:port` pieces, brackets kept whole: `[::1]:22` → `[::1]`, `22`. */
export const colonParts = (text: string) => text.match(/\[[^\]]*\]|[^:]+/g) ?? [];

// `--resolve [+]HOST:PORT:ADDR[,ADDR]…` (curl, git's http.curloptResolve): the name is looked
// up as those addresses.
export function resolveTo(value: string): string[] {
  const m = /^\+?(?:\[[^\]]*\]|[^:]*):[^:]*:(.+)$/.exec(value);
  return m ? m[1].split(",").filter(Boolean) : [];
}

// What stands before a word only known at run time is passed to the program whatever that word
// becomes (`curl evil.com "$@"`, `ssh -J evil.com "$@"` as git runs it). The words are read
// whole where the table can (`-x "$P"` is one value); else up to the first run-time word, or
// the word before it, when that is an option waiting for its value.
const asStatic = (args: readonly Word[]) =>
  args.map((w) => (w.dynamic && literal(w) ? { text: w.text, dynamic: false } : w));

function certain<T extends { ok: boolean }>(args: readonly Word[], parse: (words: readonly Word[]) => T) {
  const words = asStatic(args);
  const whole = parse(words);
  const cut = words.findIndex((w) => w.dynamic);
  if (whole.ok || cut < 0) return { parsed: whole, words, partial: false };
  // Braces, `~` and `$'…'` have values all the same (hosts.ts reads them): only a word known
  // at run time alone leaves the reading partial.
  // With nothing read before it, the word is all there is to say (hosts.ts says it).
  const partial = cut > 0 && expandWord(words[cut].text).unknown;
  for (const end of [cut, cut - 1]) {
    const part = parse(words.slice(0, Math.max(end, 0)));
    if (part.ok) return { parsed: part, words: words.slice(0, end), partial };
  }
  return { parsed: whole, words, partial: false };
}

/** Options anywhere and operands (getoptPermuted), read as far as is certain. */
export function certainPermuted(args: readonly Word[], spec: OptionSpec) {
  const { parsed: p, partial } = certain(args, (ws) => getoptPermuted(ws, spec));
  const operands = p.ok ? [...p.operands, ...(p.afterDashes ?? [])] : [];
  return p.ok ? { ok: true as const, options: p.options, operands, partial } : p;
}

/** Leading options (getopt) read as far as is certain; `operand` is the first operand. */
export function certainLeading(args: readonly Word[], spec: OptionSpec) {
  const { parsed: p, words, partial } = certain(args, (ws) => getopt(ws, spec));
  return p.ok ? { ok: true as const, options: p.options, next: p.next, operand: words[p.next], partial } : p;
}

/** The value of `NAME=value` as bash assigns it (`raw`: as written, quotes and all), when it
 *  holds nothing only known at run time. */
export function assignmentParts(text: string, raw: boolean): { name: string; values: string[] } | undefined {
  const m = /^([A-Za-z_]\w*)\+?=(.*)$/s.exec(text);
  if (!m) return undefined;
  if (!raw) return { name: m[1], values: [m[2]] };
  const e = expandWord(m[2], true);
  return e.unknown ? undefined : { name: m[1], values: [...e.values] };
}
