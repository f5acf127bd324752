// Reads a wrapper's options the way the wrapper itself does (GNU getopt_long with a "+"
// optstring, which stops at the first operand), so the analysis knows which word is the program
// it runs. Where it cannot be sure — an option it does not know, an ambiguous abbreviation, an
// option or a separate option value only known at run time (an unset `$E` vanishes and shifts
// every later word) — it says so, and the caller treats the command as opaque: never a guess.
import type { Word } from "./types";

export interface OptionSpec {
  /** getopt's optstring, without the leading "+": `k:s:fpv`. `x:` takes a value, glued or the
   *  next word; `x::` takes one only glued (`-ifoo`), as getopt reads an optional argument. */
  short: string;
  /** Long options: 0 takes no value, 1 a value (`--x=v` or the next word), 2 only `--x=v`. */
  long?: Record<string, 0 | 1 | 2>;
  /** Words read as a whole option besides the above (nice's `-10`). */
  extra?: RegExp;
}

export interface ParsedOption {
  /** `-u` for a short option, `--unset` (the full name) for a long one, the word for `extra`. */
  name: string;
  /** Its value, when it has one: a separate word, or the glued text as a static word. */
  value?: Word;
}

/** `ended`: a `--` ended the options (`next` is the word after it). */
export type Parsed =
  { ok: true; next: number; options: ParsedOption[]; ended?: boolean } | { ok: false; reason: string };

// A separate option value must stay one word whatever it holds, or the program moves.
const oneWord = (w: Word | undefined) => !!w && (!w.dynamic || !!w.oneWord);

/** Parses `args[from…]`'s options; `next` is the index of the first operand. */
export function getopt(args: readonly Word[], spec: OptionSpec, from = 0): Parsed {
  const options: ParsedOption[] = [];
  let i = from;
  const fail = (reason: string): Parsed => ({ ok: false, reason });
  while (i < args.length) {
    const w = args[i];
    // `"$X"` could hold `-u`, which takes the next word as its value.
    if (w.dynamic) return fail("with an option only known at run time");
    const text = w.text;
    if (text === "--") return { ok: true, next: i + 1, options, ended: true };
    if (!text.startsWith("-") || text === "-") break;
    if (spec.extra?.test(text)) {
      options.push({ name: text });
      i++;
      continue;
    }
    if (text.startsWith("--")) {
      const eq = text.indexOf("=");
      const given = eq < 0 ? text.slice(2) : text.slice(2, eq);
      const name = longName(given, spec.long ?? {});
      if (name === undefined) return fail(`with an option it does not know (\`${text}\`)`);
      const kind = spec.long![name];
      if (eq >= 0) {
        if (kind === 0) return fail(`with an option it does not know (\`${text}\`)`);
        options.push({ name: `--${name}`, value: { text: text.slice(eq + 1), dynamic: false } });
        i++;
      } else if (kind === 1) {
        if (!oneWord(args[i + 1])) return fail(`with the value of \`${text}\` only known at run time`);
        options.push({ name: `--${name}`, value: args[i + 1] });
        i += 2;
      } else {
        options.push({ name: `--${name}` });
        i++;
      }
      continue;
    }
    i++;
    for (let k = 1; k < text.length; k++) {
      const c = text[k];
      const at = c === ":" ? -1 : spec.short.indexOf(c);
      if (at < 0) return fail(`with an option it does not know (\`-${c}\`)`);
      const takes = spec.short[at + 1] === ":" ? (spec.short[at + 2] === ":" ? 2 : 1) : 0;
      if (takes === 0) {
        options.push({ name: `-${c}` });
        continue;
      }
      const rest = text.slice(k + 1);
      if (rest !== "") options.push({ name: `-${c}`, value: { text: rest, dynamic: false } });
      else if (takes === 2) options.push({ name: `-${c}` });
      else {
        if (!oneWord(args[i])) return fail(`with the value of \`-${c}\` only known at run time`);
        options.push({ name: `-${c}`, value: args[i] });
        i++;
      }
      break;
    }
  }
  return { ok: true, next: i, options };
}

// The long option a name or an unambiguous abbreviation of one names (`--sig` → `signal`).
function longName(given: string, long: Record<string, 0 | 1 | 2>): string | undefined {
  if (Object.hasOwn(long, given)) return given;
  const hits = Object.keys(long).filter((n) => n.startsWith(given));
  return given !== "" && hits.length === 1 ? hits[0] : undefined;
}

export type Permuted =
  { ok: true; options: ParsedOption[]; operands: Word[]; afterDashes?: Word[] } | { ok: false; reason: string };

/** Options among the operands too, as getopt_long reads them without "+" (su, script): up to a
 *  `--`, every word that starts with `-` is an option. `afterDashes`: the words after the `--`. */
export function getoptPermuted(args: readonly Word[], spec: OptionSpec): Permuted {
  const options: ParsedOption[] = [];
  const operands: Word[] = [];
  for (let i = 0; i < args.length;) {
    const parsed = getopt(args, spec, i);
    if (!parsed.ok) return parsed;
    options.push(...parsed.options);
    if (parsed.ended) return { ok: true, options, operands, afterDashes: args.slice(parsed.next) };
    if (parsed.next >= args.length) break;
    operands.push(args[parsed.next]);
    i = parsed.next + 1;
  }
  return { ok: true, options, operands };
}
