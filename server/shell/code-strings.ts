// The string literals of code in another language (python, perl, ruby, node, awk, vim script,
// gdb's python), read well enough to say which command lines that code may hand a shell or exec:
// `os.system("rm -rf /")`, `subprocess.run(['rm','-rf','/'])`, `perl -e 'exec "rm"'`, awk's
// `print | "rm"`. Only a reading: a literal the tokenizer misses leaves the code as it was, run
// code that is asked about (never allowed); one it reads wrongly can only add a command to judge.
// Pure text work; inline-code.ts turns the readings into commands.

/** What code may run: whole command lines (`system("…")`) and argument lists (`exec("rm", "-rf")`). */
export interface Readings {
  readonly scripts: string[];
  readonly argvs: string[][];
}

// Code that can start a program in one of these languages. Broad on purpose: a literal in code
// that names none of these is data (`print("rm")`), one in code that may run it is a command.
const RUNS =
  /\b(system|exec\w*|popen\w*|spawn\w*|subprocess|child_process|Popen|check_output|check_call|call|run|getoutput|getstatusoutput|shell_exec|passthru|proc_open|pcntl_exec|open[23]?|Open3|Process|pty|readpipe|qx|execa|Command|os|Deno|Bun|shell)\b|`|%x|\|/;
// Literals past this many are not read, nor readings past this many analysed (each is a walk
// of its own): the code stays asked about, as before.
const MAX_LITERALS = 200;
const MAX_READINGS = 64;

interface Literal {
  text: string;
  /** A list of words (`qw(…)`, `%w(…)`). */
  words?: boolean;
  start: number;
  end: number;
}

const PAIRS: Record<string, string> = { "(": ")", "[": "]", "{": "}", "<": ">" };

// Backslash escapes as python, perl's and ruby's double quotes, node and awk read them.
function unescape(s: string): string {
  return s.replace(
    /\\(x\{([0-9a-fA-F]+)\}|x([0-9a-fA-F]{1,2})|u\{([0-9a-fA-F]+)\}|u([0-9a-fA-F]{4})|U([0-9a-fA-F]{8})|([0-7]{1,3})|([\s\S]))/g,
    (_m, _all, xb: string, x: string, ub: string, u: string, U: string, oct: string, other: string) => {
      const hex = xb ?? x ?? ub ?? u ?? U;
      if (hex !== undefined) return safeChar(parseInt(hex, 16));
      if (oct !== undefined) return safeChar(parseInt(oct, 8));
      return { n: "\n", t: "\t", r: "\r", a: "\x07", e: "\x1b", f: "\f", v: "\v" }[other] ?? other;
    },
  );
}
const safeChar = (n: number) => (n <= 0x10ffff ? String.fromCodePoint(n) : "");

/** How a language quotes: single quotes keep backslashes (perl, ruby, php, vim; python's `r'…'`
 *  too), and perl's or ruby's quote-like operators. */
export interface Quoting {
  rawSingle: boolean;
  /** `#` starts a comment (python, perl, ruby, awk): a quote in it is no string. */
  hashComments?: boolean;
  quoteLike?: "perl" | "ruby";
}

const QUOTE_LIKE = { perl: /^(qx|qq|qw|q)([{(<[/|!#~])/, ruby: /^%([xqQwWi]?)([{(<[/|!])/ };

/** The string literals of `code`, in order. */
export function literals(code: string, quoting: Quoting): Literal[] {
  const out: Literal[] = [];
  for (let i = 0; i < code.length && out.length < MAX_LITERALS; i++) {
    const c = code[i];
    // perl's `qx{…}`, `qq(…)`, `q/…/`, `qw(…)`; ruby's `%x(…)`, `%q[…]`, `%w(…)`.
    const quoteLike = quoting.quoteLike && QUOTE_LIKE[quoting.quoteLike].exec(code.slice(i, i + 4));
    if (quoteLike && (i === 0 || !/\w/.test(code[i - 1]))) {
      const open = quoteLike[2];
      const close = PAIRS[open] ?? open;
      const from = i + quoteLike[0].length;
      const end = code.indexOf(close, from);
      if (end < 0) break;
      const body = code.slice(from, end);
      const kind = quoteLike[1];
      if (/^([wWi]|qw)$/.test(kind)) out.push({ text: body, words: true, start: i, end: end + 1 });
      else out.push({ text: kind === "q" ? body : unescape(body), start: i, end: end + 1 });
      i = end;
      continue;
    }
    if (c === "#" && quoting.hashComments && (i === 0 || /[\s;]/.test(code[i - 1]))) {
      const end = code.indexOf("\n", i);
      if (end < 0) break;
      i = end;
      continue;
    }
    if (c !== "'" && c !== '"' && c !== "`") continue;
    const triple = code.startsWith(c.repeat(3), i) ? c.repeat(3) : c;
    let j = i + triple.length;
    for (; j < code.length && !code.startsWith(triple, j); j++) if (code[j] === "\\") j++;
    if (j >= code.length) break;
    const body = code.slice(i + triple.length, j);
    const raw = (c === "'" && quoting.rawSingle) || /(^|[^\w])[rR][bB]?$|(^|[^\w])[bB][rR]$/.test(code.slice(0, i));
    out.push({ text: raw ? body.replace(/\\(['\\])/g, "$1") : unescape(body), start: i, end: j + triple.length });
    i = j + triple.length - 1;
  }
  return out;
}

// perl's `open(F, "rm -rf / |")`, `open(F, "|-", …)`, ruby's `open("|rm …")`: a pipe's mark.
const pipeMark = (s: string) => s.replace(/^\s*(\|-?|-\|)\s*/, "").replace(/\s*\|\s*$/, "");

/** Whether code can start a program at all. */
export const mayRun = (code: string) => RUNS.test(code);

/** The command lines and argument lists code may run, when it can run any. */
export function codeReadings(codes: readonly string[], quoting: Quoting, depth = 0): Readings {
  const scripts: string[] = [];
  const argvs: string[][] = [];
  for (const code of codes) {
    if (!RUNS.test(code)) continue;
    const lits = literals(code, quoting);
    // Code in a literal the code runs in turn (`exec('os.system("rm")')`, `sh -c "perl -e …"`).
    if (depth < 2) {
      const nested = codeReadings(
        lits.map((l) => l.text),
        quoting,
        depth + 1,
      );
      scripts.push(...nested.scripts);
      argvs.push(...nested.argvs);
    }
    // Pieces: literals joined by `+`, `.`, `..` or nothing (python's `"r" "m"`, awk's); groups:
    // pieces separated by commas (`exec("rm", "-rf")`, `['rm', '-rf']`). Each literal and each
    // piece may be a command line, each group of several an argument list.
    const groups: string[][] = [];
    lits.forEach((lit, k) => {
      const gap = k > 0 ? code.slice(lits[k - 1].end, lit.start) : undefined;
      if (lit.words) {
        argvs.push(lit.text.split(/\s+/).filter(Boolean));
        groups.push([]);
        return;
      }
      scripts.push(lit.text);
      const group = groups.at(-1);
      if (group && group.length > 0 && gap !== undefined && /^\s*(\+|\.\.?)?\s*$/.test(gap))
        group[group.length - 1] += lit.text;
      else if (group && group.length > 0 && gap !== undefined && /^\s*,\s*$/.test(gap)) group.push(lit.text);
      else groups.push([lit.text]);
    });
    for (const g of groups) {
      scripts.push(...g);
      if (g.length > 1) argvs.push(g);
    }
  }
  // A word with no letter, or an option (`"-rf"`), is no command line.
  const lines = [...new Set(scripts.map(pipeMark))].filter((s) => /[A-Za-z]/.test(s) && !/^\s*-/.test(s));
  const lists = argvs.filter((g) => g.length > 0 && g[0] !== "");
  return { scripts: lines.slice(0, MAX_READINGS), argvs: lists.slice(0, MAX_READINGS) };
}
