// Programs that run code the line hands them in ways beyond `-c`/`-e`: an interpreter whose
// script is its own stdin or a descriptor (`python3 /dev/stdin <<<…`, `perl <(echo …)`), node
// loading a `data:` URL (`--import=data:…`), make reading a makefile from stdin or `--eval`
// text, and npm running a string as a shell command (`npm exec -c '…'`, a `scripts.x` value that
// `npm pkg set` stores for `npm run x`). Code in a language of its own is marked `runsCode` or
// opaque, so it is asked about; a shell command string is analysed as a script, so a denied
// command in it is denied.
import { posix } from "node:path";
import type { SimpleCommand, Word } from "./types";
import type { Context } from "./wrappers";
import { fromWords, guessed, inner, opaque, sameStdin } from "./runners";

type Unwrap = (cmd: SimpleCommand, ctx: Context) => SimpleCommand[];

/** A file that is a descriptor of the process (`/dev/stdin`, `/dev/fd/3`, `/proc/self/fd/0`):
 *  a pipe, a here-document or a process substitution, not a file the policy could read. */
export function descriptorFile(w: Word): boolean {
  if (w.dynamic) return /^[<>]\(/.test(w.text);
  const p = posix.normalize(w.text);
  return /(^|\/)(dev\/(stdin|fd\/\d+)|proc\/(self|thread-self|\d+)\/fd\/\d+)$/.test(p);
}

// A word that names the program's own source file: arguments after it are the program's.
const SOURCE_FILE = /\.(py|pyw|pl|pm|rb|js|mjs|cjs|ts|mts|cts|php|lua|tcl|r|jl|groovy|scala|hs|jsx|tsx)$/i;
const NODES = /^(node|nodejs|bun|deno)$/;

const PYTHONS = /^(python[0-9.]*|pypy[0-9.]*)$/;
// A cluster of python's flags that take no value, `-i` among them (`-qi`, `-iu`).
const PY_INTERACTIVE = /^-[bBdEhIOPqsSuvVx]*i/;
const PY_CONSOLES = /^(code|asyncio|pdb)$/;
const pyConsole = (w: Word, next: Word | undefined) =>
  !w.dynamic &&
  (/^-[bBdEhIOPqsSuvVx]*m(code|asyncio|pdb)$/.test(w.text) ||
    (/^-[bBdEhIOPqsSuvVx]*m$/.test(w.text) && !!next && PY_CONSOLES.test(next.text)));

/** Why an interpreter's words make it run code the policy cannot read, beyond `-c`/`-e`. */
export function interpreterCode(program: string, args: readonly Word[]): string | undefined {
  const end = args.findIndex((w) => !w.dynamic && !w.text.startsWith("-") && SOURCE_FILE.test(w.text));
  const own = end < 0 ? args : args.slice(0, end);
  if (own.some(descriptorFile)) return `\`${program}\` runs a program read from its input or a descriptor`;
  // `-` after an option's value (`python3 -W ignore -`, `-X importtime -`) is the script, read
  // from stdin; python's `-i` and its console modules (`-m code`) run what stdin says too.
  if (own.some((w) => !w.dynamic && w.text === "-")) return `\`${program}\` runs a program read from its input`;
  if (PYTHONS.test(program) && own.some((w, i) => PY_INTERACTIVE.test(w.text) || pyConsole(w, own[i + 1])))
    return `\`${program}\` runs what its input says (\`-i\`, \`-m code\`)`;
  // `--import=data:text/javascript,…`, `--loader data:…`: code in the URL itself.
  if (NODES.test(program) && own.some((w) => /^(-[\w-]+=)?data:/i.test(w.text)))
    return `\`${program}\` loads code given on the line as a \`data:\` URL`;
  return undefined;
}

// GNU make's options that take a value (`-f FILE`, `-fFILE`, `--file=FILE`): read so the value
// is not taken for an option, and `-f -`, `--eval` found wherever they stand.
const MAKE_VALUE = "CfIoWE";
const MAKE_LONG: Record<string, "file" | "eval" | "value" | "flag"> = {
  file: "file",
  makefile: "file",
  eval: "eval",
  directory: "value",
  "include-dir": "value",
  "old-file": "value",
  "assume-old": "value",
  "new-file": "value",
  "assume-new": "value",
  "what-if": "value",
};
// Variables on make's line that change what its recipes run, or add makefiles and options.
const MAKE_VARIABLES = /^(SHELL|\.SHELLFLAGS|MAKEFLAGS|GNUMAKEFLAGS|MFLAGS|MAKEFILES|\.RECIPEPREFIX)$/;

/** make with a makefile from stdin or a descriptor, `--eval` text, or a variable that runs. */
export function makeCode(cmd: SimpleCommand, args: readonly Word[]): SimpleCommand {
  const code = (why: string): SimpleCommand => ({ ...cmd, runsCode: `\`make\` ${why}` });
  const file = (v: Word | undefined) =>
    v === undefined || (v.dynamic && !v.oneWord) || v.text === "-" || descriptorFile(v);
  if (cmd.assignments.some((a) => MAKE_VARIABLES.test(a.replace(/[+:?]?=.*$/s, ""))))
    return code("reads options or makefiles from a variable set on the line");
  let options = true;
  for (let i = 0; i < args.length; i++) {
    const w = args[i];
    const t = w.text;
    if (options && t === "--") {
      options = false;
      continue;
    }
    if (options && t.startsWith("--")) {
      const eq = t.indexOf("=");
      const given = t.slice(2, eq < 0 ? undefined : eq);
      const hits = Object.keys(MAKE_LONG).filter((n) => given.length > 0 && n.startsWith(given));
      const kind =
        hits.length === 1 ? MAKE_LONG[hits[0]] : hits.every((h) => MAKE_LONG[h] === "file") ? "file" : "flag";
      if (hits.length === 0) continue;
      const value = eq >= 0 ? { text: t.slice(eq + 1), dynamic: w.dynamic } : args[++i];
      if (kind === "eval") return code("runs makefile text given on the line (`--eval`)");
      if (kind === "file" && file(value)) return code("reads a makefile from its input or a descriptor");
      continue;
    }
    if (options && /^-[^-]/.test(t)) {
      for (let k = 1; k < t.length; k++) {
        // `-j8`, `-l2.5`, `-Oline`: the rest of the word is their value.
        if ("jlO".includes(t[k])) break;
        if (!MAKE_VALUE.includes(t[k])) continue;
        const value = k + 1 < t.length ? { text: t.slice(k + 1), dynamic: w.dynamic } : args[++i];
        if (t[k] === "E") return code("runs makefile text given on the line (`-E`)");
        if (t[k] === "f" && file(value)) return code("reads a makefile from its input or a descriptor");
        break;
      }
      continue;
    }
    // `NAME=value` on the line: `!=` runs its value in a shell, `$(shell …)` where expanded.
    const assign = /^([^=\s]*?)\s*(::?|!|\?|\+)?=/s.exec(t);
    if (assign && (w.dynamic || assign[2] === "!" || /\$[({]/.test(t) || MAKE_VARIABLES.test(assign[1])))
      return code("runs code in a variable given on the line");
  }
  return cmd;
}

// npm's options before the command `exec` runs that take no value, and those that take one.
const NPX_FLAGS = new Set(
  "-y --yes --no -q --quiet -s --silent --offline --prefer-offline --prefer-online --ignore-scripts --no-install --ws --workspaces --include-workspace-root --verbose -d -dd -ddd".split(
    " ",
  ),
);
const NPX_VALUES = new Set(["-p", "--package", "-w", "--workspace", "--loglevel", "--registry", "--cache"]);
// npm's sub-commands, for telling one from an option's value (`npm --prefix x exec`).
const NPM_COMMANDS = new Set(
  "exec x pkg set-script run run-script install i ci test t start stop restart uninstall update publish pack init create config get set ls view audit link".split(
    " ",
  ),
);

/** npm and npx: a `-c`/`--call` string, a command `exec` runs, a script `pkg set` stores. */
export function npm(cmd: SimpleCommand, args: Word[], ctx: Context, unwrap: Unwrap, program: string): SimpleCommand[] {
  // `--node-options=--import=data:…` becomes NODE_OPTIONS for what npm runs.
  if (args.some((w) => /^--node-options\b/.test(w.text) || /^node-options\b/.test(w.text)))
    return [{ ...cmd, runsCode: "`npm` sets node options for the programs it runs" }];
  let at = 0;
  if (program === "npm") {
    at = args.findIndex(
      (w, i) => !w.text.startsWith("-") && (NPM_COMMANDS.has(w.text) || i === 0 || !/^--/.test(args[i - 1].text)),
    );
    if (at < 0) return [cmd];
    const sub = args[at].text;
    if (sub === "pkg" || sub === "set-script") {
      const stored = storedScripts(args.slice(at + 1), sub);
      if (typeof stored === "string") return [opaque(cmd, stored)];
      return [cmd, ...stored.flatMap((t) => inner(ctx.analyse(t, { fed: true }), "npm"))];
    }
    if (sub !== "exec" && sub !== "x") return [cmd];
    at++;
  }
  const rest = args.slice(at);
  const dashes = rest.findIndex((w) => w.text === "--");
  const head = dashes < 0 ? rest : rest.slice(0, dashes);
  const calls: Word[] = [];
  for (let i = 0; i < head.length; i++) {
    const t = head[i].text;
    if (t === "-c" || t === "--call") calls.push(head[++i] ?? { text: "", dynamic: true });
    else if (/^(-c|--call)=/.test(t)) calls.push({ ...head[i], text: t.slice(t.indexOf("=") + 1) });
  }
  if (calls.length > 0) {
    if (calls.some((c) => c.dynamic)) return [opaque(cmd, `\`${program}\` of a command only known at run time`)];
    return [cmd, ...calls.flatMap((c) => inner(ctx.analyse(c.text, sameStdin(ctx)), program))];
  }
  // The command exec runs: a package's binary, or a program found on PATH.
  let i = 0;
  for (; i < rest.length; i++) {
    const w = rest[i];
    if (w.dynamic) break;
    if (w.text === "--") {
      i++;
      break;
    }
    if (!w.text.startsWith("-")) break;
    if (NPX_VALUES.has(w.text)) i++;
    else if (!NPX_FLAGS.has(w.text) && !/^--[\w-]+=/.test(w.text))
      return guessed(cmd, rest, ctx, unwrap, `\`${program}\` with an option the analysis does not know`);
  }
  return i < rest.length ? [cmd, ...unwrap(fromWords(rest.slice(i), program), ctx)] : [cmd];
}

// `npm pkg set scripts.x='…'` (or `scripts[x]`, `--json scripts='{…}'`) and `npm set-script x
// '…'`: what `npm run x`, or install's lifecycle, later runs with `sh -c`. A string: why the
// scripts cannot be read.
function storedScripts(words: readonly Word[], sub: string): string[] | string {
  if (sub === "set-script") {
    const script = words.filter((w) => !w.text.startsWith("-"))[1];
    if (!script) return [];
    return script.dynamic ? "`npm set-script` of a script only known at run time" : [script.text];
  }
  const set = words.findIndex((w) => w.text === "set");
  if (set < 0) return [];
  const json = words.some((w) => w.text === "--json");
  const out: string[] = [];
  for (const w of words.slice(set + 1)) {
    if (!w.dynamic && w.text.startsWith("-")) continue;
    const eq = w.text.indexOf("=");
    const key = eq < 0 ? w.text : w.text.slice(0, eq);
    const script = /^scripts(\.|\[|$)/.test(key);
    // A run-time word may be, or hold, a key of `scripts`.
    if (w.dynamic && (script || eq < 0 || /[$`]/.test(key))) return "`npm pkg set` of a value only known at run time";
    if (!script || eq < 0) continue;
    const value = w.text.slice(eq + 1);
    if (!json) out.push(value);
    else {
      const parsed = parseJson(value);
      if (parsed === undefined) return "`npm pkg set --json` of scripts the analysis cannot read";
      out.push(...parsed);
    }
  }
  return out;
}

function parseJson(text: string): string[] | undefined {
  try {
    const v: unknown = JSON.parse(text);
    if (typeof v === "string") return [v];
    if (v && typeof v === "object") return Object.values(v).map((x) => (typeof x === "string" ? x : JSON.stringify(x)));
  } catch {
    return undefined;
  }
  return undefined;
}
