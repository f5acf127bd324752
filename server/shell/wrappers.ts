// Commands that run other commands. Known wrappers (`env`, `timeout`, `nohup`, `sudo`, `xargs`,
// `find -exec`, ...) are looked through: the wrapper is listed (a rule may name it) and so is
// the command it runs, found by reading the wrapper's options as it does (wrapper-options.ts).
// A static `sh -c '…'`, `eval '…'` or `watch '…'` string is analysed in turn, and so is the
// text a shell reads as its script from stdin when the line holds it (`bash <<'EOF'`, stdin.ts);
// runners.ts does the same for su, script, flock and others; git-code.ts for the command
// strings git runs, code-options.ts for code an interpreter, make or npm is handed in other
// ways. Anything these run that cannot be read from the line, or a program whose place the
// analysis cannot be sure of (an option it does not know, a value bash may drop), is opaque.
import type { SimpleCommand, ShellAnalysis, Word } from "./types";
import type { Stdin } from "./stdin";
import { getopt } from "./getopt";
import { SENSITIVE_VARIABLE, shellScripts, SHELLS, STDIN_FILES, WATCH, WRAPPERS } from "./wrapper-options";
import { fromWords, inner, opaque, runner, sameStdin, stdinScript } from "./runners";
import { git } from "./git-code";
import { interpreterCode, makeCode, npm } from "./code-options";
import { clientCode, variableCode, wordSettings } from "./client-code";
import { editorCode, interpreterCommands } from "./inline-code";

export { SENSITIVE_VARIABLE, SHELLS };

export interface Context {
  /** stdin is a pipe or a redirect. */
  fed: boolean;
  /** What stdin holds, when the line shows it. */
  stdin?: Stdin;
  depth: number;
  /** Analyses a string bash will itself parse (sh -c, eval), whose commands read `stdin`. */
  analyse(text: string, stdin?: { fed?: boolean; stdin?: Stdin }): ShellAnalysis;
}

export const INTERPRETERS =
  /^(python[0-9.]*|pypy[0-9.]*|perl[0-9.]*|ruby|node|nodejs|deno|bun|php[0-9.]*|lua[0-9.]*|tclsh|awk|gawk|mawk|nawk|osascript|Rscript|irb|jshell|groovy|scala|julia|ghci|runghc)$/;

// Builtins whose effect the analysis cannot follow: they run strings or files as code, or
// change what a later name means.
const OPAQUE: Record<string, string> = {
  source: "it runs a file the analysis cannot read",
  ".": "it runs a file the analysis cannot read",
  alias: "an alias changes what later names run",
  unalias: "it changes what later names run",
  trap: "a trap runs its string as code later",
  enable: "it can load code into the shell",
  fc: "it runs commands from history",
  let: "arithmetic can run code hidden in variables",
  coproc: "a coprocess is not analysed",
  mapfile: "it can run a callback",
  readarray: "it can run a callback",
  hash: "it changes which file a name runs",
  bind: "it binds keys to commands",
  complete: "it registers commands to run",
  shopt: "it changes how bash reads later commands",
};
// Programs that run a command elsewhere (another machine, a terminal server, later) or given in
// a language of their own: not followed.
for (const p of ["ssh", "tmux", "screen", "expect", "at", "batch"]) {
  OPAQUE[p] = "it runs a command the analysis does not follow";
}

// Builtins that take variable names: a name only known at run time can carry `a[$(cmd)]`.
const NAME_TAKERS = new Set(["read", "printf", "wait", "getopts", "test", "["]);

// The variables a builtin may set: printf only its -v option's value (other words are text);
// read, getopts and wait any word, glued to an option or not (`read -a NAME`, `wait -pNAME`).
function namesSet(program: string, args: Word[]): string[] {
  if (program === "printf") {
    const first = args[0]?.text ?? "";
    return first === "-v" ? [args[1]?.text ?? ""] : first.startsWith("-v") ? [first.slice(2)] : [];
  }
  if (!NAME_TAKERS.has(program) || program === "test" || program === "[") return [];
  return args.map((w) => w.text.replace(/^-[a-zA-Z]*[vap]/, ""));
}

// Options that hand an interpreter its program inline, alone or with the code glued on
// (`python3 -c'…'`, `perl -le'…'`, `node --eval=…`); a first letter that takes a value of its
// own (`-Werror`, `-Mstrict`, `-Xdev`) is not one.
const INLINE_CODE =
  /^(-[a-zA-Z]*[ceEr]|--eval|--exec|-p|--print|eval)$|^-(?![WXmM])[a-zA-Z]*?[ceE].|^--(eval|exec|print)=/s;
// sed scripts that only print a range or substitute without the `e` (execute) or `w` flags.
const PLAIN_SED =
  /^\s*((\d+|\$)(\s*,\s*(\d+|\$))?\s*[pd]|s([/|#,:@])(?:\\.|(?!\5).)*\5(?:\\.|(?!\5).)*\5[gpiI0-9]*)\s*$/;

// A sed script is an operand, or the value of an option: `-e …`, glued in a cluster (`-ne1e id`),
// `--expression=…` (or any prefix GNU takes, `--e=…`); `-f`/`--file` read one from a file.
function sedScriptRuns(w: Word): boolean {
  const x = w.text;
  if (!x.startsWith("-")) return !PLAIN_SED.test(x);
  if (x.startsWith("--")) {
    const eq = x.indexOf("=");
    const name = eq < 0 ? x : x.slice(0, eq);
    if (name.length <= 2) return false;
    if ("--file".startsWith(name)) return true;
    return "--expression".startsWith(name) && eq >= 0 && !PLAIN_SED.test(x.slice(eq + 1));
  }
  const m = /^-[a-zA-Z]*?([ef])(.*)$/s.exec(x);
  return !!m && (m[1] === "f" || (m[2] !== "" && !PLAIN_SED.test(m[2])));
}

/** `cmd` and whatever it runs in turn. */
export function unwrap(cmd: SimpleCommand, ctx: Context): SimpleCommand[] {
  if (cmd.opaque || cmd.argv.length === 0) return [cmd];
  // A case-insensitive file system runs `BASH` as bash: what it runs is looked for all the same.
  const program = cmd.argv[0].toLowerCase();
  const args = cmd.words.slice(1);
  const staticArgs = args.every((w) => !w.dynamic);
  // `. /dev/stdin <<EOF`: the current shell runs what it reads.
  if ((program === "source" || program === ".") && !args[0]?.dynamic && STDIN_FILES.test(args[0]?.text ?? ""))
    return stdinScript(cmd, ctx);
  // `ssh -o ProxyCommand='…'`, `rsync -e '…'`: run here, whatever ssh then runs remotely.
  const local = clientCode(cmd, args, ctx, unwrap);
  if (local) {
    const own = Object.hasOwn(OPAQUE, program) ? opaque(cmd, `\`${cmd.argv[0]}\`: ${OPAQUE[program]}`) : cmd;
    return [own, ...local];
  }
  if (program === "alias") return aliases(cmd, args, ctx);
  if (program === "trap") return trap(cmd, args, ctx);
  if (program === "coproc") return coproc(cmd, args, ctx);
  if (Object.hasOwn(OPAQUE, program)) return [opaque(cmd, `\`${cmd.argv[0]}\`: ${OPAQUE[program]}`)];
  if (
    NAME_TAKERS.has(program) &&
    !staticArgs &&
    (program !== "test" && program !== "[" ? true : args.some((w) => w.text === "-v" || w.text === "-R"))
  ) {
    return [opaque(cmd, `\`${program}\` with a name only known at run time`)];
  }
  // `printf -v PATH .`, `read PATH`: the rest of the line runs with what it sets.
  if (namesSet(program, args).some((n) => SENSITIVE_VARIABLE.test(n)))
    return [opaque(cmd, `\`${program}\` sets a variable that changes what later programs run`)];
  if (program === "eval") {
    if (!staticArgs) return [opaque(cmd, "`eval` of text only known at run time")];
    return [cmd, ...inner(ctx.analyse(args.map((w) => w.text).join(" "), sameStdin(ctx)), "eval")];
  }
  if (program === "watch") return watch(cmd, args, ctx);
  if (SHELLS.has(program)) return shell(cmd, args, ctx, program);
  if (INTERPRETERS.test(program)) {
    const script = args.find((w) => !w.text.startsWith("-") || w.text === "-");
    // What the code visibly runs is listed too (inline-code.ts): `python3 -c 'os.system("rm")'`.
    if ((ctx.fed && (!script || script.text === "-")) || script?.text === "-")
      return [
        opaque(cmd, `\`${program}\` runs a program read from its input`),
        ...interpreterCommands(program, args, ctx, unwrap, true),
      ];
    const unread = interpreterCode(program, args);
    if (unread) return [opaque(cmd, unread), ...interpreterCommands(program, args, ctx, unwrap, true)];
    if (/awk$/.test(program) || args.some((w) => INLINE_CODE.test(w.text)))
      return [
        { ...cmd, runsCode: `\`${program}\` runs code given on the line` },
        ...interpreterCommands(program, args, ctx, unwrap, false),
      ];
    return [cmd];
  }
  if (program === "make" || program === "gmake") return [makeCode(cmd, args)];
  if (program === "npm" || program === "npx") return npm(cmd, args, ctx, unwrap, program);
  // `setarch ARCH [options] CMD…`: the architecture comes before the options.
  if (program === "setarch" && args[0] && !args[0].text.startsWith("-")) {
    if (args[0].dynamic && !args[0].oneWord)
      return [opaque(cmd, "`setarch` with an architecture only known at run time")];
    return wrapped(cmd, args.slice(1), ctx, "linux64");
  }
  if (program === "sed" && args.some(sedScriptRuns))
    return [{ ...cmd, runsCode: "a sed script can run commands (`e`)" }];
  if (program === "git") return git(cmd, args, ctx);
  if (program === "find") return find(cmd, args, ctx);
  if (program === "busybox" || program === "toybox") return busybox(cmd, args, ctx, program);
  return (
    editorCode(cmd, args, ctx, unwrap, program) ??
    runner(cmd, args, ctx, unwrap, program) ??
    wrapped(cmd, args, ctx, program)
  );
}

// A known wrapper: its options read as it reads them (wrapper-options.ts), then what it runs.
// Where the analysis cannot be sure which word that is, the wrapper is opaque, never guessed.
function wrapped(cmd: SimpleCommand, args: Word[], ctx: Context, program: string): SimpleCommand[] {
  const spec = Object.hasOwn(WRAPPERS, program) ? WRAPPERS[program] : undefined;
  if (!spec) return [cmd];
  const parsed = getopt(args, spec.options);
  if (!parsed.ok) return [opaque(cmd, `\`${program}\` ${parsed.reason}`)];
  const names = parsed.options.map((o) => o.name);
  if (program === "env" && names.some((n) => n === "-S" || n === "--split-string"))
    return splitString(cmd, args.slice(parsed.next), parsed.options, ctx);
  if ((program === "sudo" || program === "doas") && names.some((n) => /^(-s|-i|--shell|--login)$/.test(n)))
    return sudoShell(cmd, args.slice(parsed.next), ctx);
  if (program === "command" && names.some((n) => n === "-v" || n === "-V")) return [cmd];
  // A binfmt interpreter registered in the new namespace runs in place of the program.
  if (program === "unshare" && names.some((n) => /^(-l|--load-interp|--mount-binfmt)$/.test(n)))
    return [opaque(cmd, "`unshare` registering an interpreter for programs it runs")];
  let i = parsed.next;
  // GNU env reads a lone `-` after its options as `-i`.
  if (program === "env" && !args[i]?.dynamic && args[i]?.text === "-") i++;
  // env and sudo take every word with a `=` (not first) as a variable, whatever its name. One
  // that changes what runs (`PATH=`) leaves the command unsure, listed all the same.
  let unsure: string | undefined;
  for (; spec.assignments && i < args.length && !args[i].dynamic && /^[^=]+=/.test(args[i].text); i++) {
    const name = args[i].text.slice(0, args[i].text.indexOf("="));
    if (SENSITIVE_VARIABLE.test(name)) unsure ??= `\`${program} ${name}=…\` changes what the program runs`;
  }
  // `env GIT_SSH_COMMAND='…' git fetch`: the command the variable names is listed too.
  const code = spec.assignments ? variableCode(wordSettings(args.slice(parsed.next, i)), ctx, unwrap) : [];
  if (unsure) {
    const why = unsure;
    if (i >= args.length) return [opaque(cmd, why), ...code];
    const run = unwrap(fromWords(args.slice(i), program), ctx);
    return [opaque(cmd, why), ...run.map((c) => (c.opaque ? c : opaque(c, why))), ...code];
  }
  for (let n = spec.leadingOperands ?? 0; n > 0 && i < args.length; n--, i++) {
    const w = args[i];
    if (w.dynamic && !w.oneWord) return [opaque(cmd, `\`${program}\` with an operand only known at run time`)];
    if (spec.operandShape && !w.dynamic && !spec.operandShape.test(w.text))
      return [opaque(cmd, `\`${program}\` with an operand it may not read as one (\`${w.text}\`)`)];
  }
  // A wrapper with nothing to run is itself the command (`env` prints the environment), but
  // chroot and unshare then start a shell.
  if (i >= args.length)
    return spec.startsShell
      ? [...stdinScript(cmd, ctx, `\`${program}\` without a command starts a shell`), ...code]
      : [cmd, ...code];
  let words = args.slice(i);
  if (program === "xargs") {
    const replace = xargsReplace(parsed.options);
    if (replace === null) return [opaque(cmd, "`xargs` with a replacement string only known at run time")];
    // xargs appends what it reads from its input (known when the line pipes it), or puts it
    // in place of the replacement string: arguments nobody can read from the line.
    if (replace === undefined) words.push(...xargsInput(parsed.options, ctx));
    else words = words.map((w) => (w.text.includes(replace) ? { text: w.text, dynamic: true } : w));
  }
  return [cmd, ...unwrap(fromWords(words, program), ctx), ...code];
}

// The string xargs replaces with its input (`-I R`, `-i[R]`, `--replace[=R]`, the last one
// given); null when only known at run time.
function xargsReplace(options: readonly { name: string; value?: Word }[]): string | null | undefined {
  let replace: string | null | undefined;
  for (const o of options) {
    if (o.name !== "-I" && o.name !== "-i" && o.name !== "--replace") continue;
    replace = o.value === undefined ? "{}" : o.value.dynamic ? null : o.value.text;
  }
  return replace === "" ? undefined : replace;
}

// The words xargs reads from its input, when the line shows exactly what that is (`echo -rf y |
// xargs rm` runs `rm -rf y`), split as xargs splits them, so a rule they match decides. One
// unknown word stays after them: options may spread them over several runs (`-n1`), and a
// reading of the input is never grounds to allow a command.
function xargsInput(options: readonly { name: string; value?: Word }[], ctx: Context): Word[] {
  const unknown: Word = { text: "<input of xargs>", dynamic: true };
  const names = options.map((o) => o.name);
  if (!ctx.stdin?.exact || names.some((n) => n === "-a" || n === "--arg-file")) return [unknown];
  const delimiter = options.filter((o) => o.name === "-d" || o.name === "--delimiter").at(-1)?.value;
  let split: string[] | undefined;
  if (names.some((n) => n === "-0" || n === "--null")) split = ctx.stdin.text.split("\0");
  else if (delimiter) {
    const d =
      new Map([
        ["\\n", "\n"],
        ["\\t", "\t"],
        ["\\0", "\0"],
      ]).get(delimiter.text) ?? delimiter.text;
    split = !delimiter.dynamic && d.length === 1 ? ctx.stdin.text.split(d) : undefined;
  } else split = xargsWords(ctx.stdin.text);
  if (!split) return [unknown];
  const words = split.filter((t, i) => t !== "" || i < split.length - 1).map((text) => ({ text, dynamic: false }));
  return [...words, unknown];
}

// GNU xargs' default reading: blanks and newlines separate words, single and double quotes
// group (not across a line), a backslash takes the next character. Unbalanced: undefined.
function xargsWords(text: string): string[] | undefined {
  const out: string[] = [];
  let word: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === " " || c === "\t" || c === "\n") {
      if (word !== undefined) out.push(word);
      word = undefined;
    } else if (c === "'" || c === '"') {
      const end = text.indexOf(c, i + 1);
      if (end < 0 || text.slice(i + 1, end).includes("\n")) return undefined;
      word = (word ?? "") + text.slice(i + 1, end);
      i = end;
    } else if (c === "\\") {
      if (i + 1 >= text.length) return undefined;
      word = (word ?? "") + text[++i];
    } else word = (word ?? "") + c;
  }
  if (word !== undefined) out.push(word);
  return out;
}

// `alias r='rm -rf'`: each value is what a later `r` runs, read as a script; alias stays opaque.
function aliases(cmd: SimpleCommand, args: Word[], ctx: Context): SimpleCommand[] {
  const why = `\`${cmd.argv[0]}\`: ${OPAQUE.alias}`;
  const values = args.flatMap((w) =>
    !w.dynamic && /^[^=]+=/.test(w.text) ? [w.text.slice(w.text.indexOf("=") + 1)] : [],
  );
  return [opaque(cmd, why), ...values.flatMap((v) => inner(ctx.analyse(v, {}), "alias", why))];
}

// `trap 'rm -rf /' EXIT`: the action runs later, read as a script; trap stays opaque.
function trap(cmd: SimpleCommand, args: Word[], ctx: Context): SimpleCommand[] {
  const why = `\`${cmd.argv[0]}\`: ${OPAQUE.trap}`;
  const rest = args[0]?.text === "--" ? args.slice(1) : args;
  const action = rest.length >= 2 && !rest[0].dynamic && !rest[0].text.startsWith("-") ? rest[0].text : undefined;
  return [opaque(cmd, why), ...(action ? inner(ctx.analyse(action, {}), "trap", why) : [])];
}

// `coproc rm -rf /` runs its words; `coproc NAME { rm -rf /; }` (or without a NAME) its group,
// whose first words the grammar reads as coproc's (the rest it lists as commands). Read as a
// reading; coproc stays opaque.
function coproc(cmd: SimpleCommand, args: Word[], ctx: Context): SimpleCommand[] {
  const why = `\`${cmd.argv[0]}\`: ${OPAQUE.coproc}`;
  let words = args;
  if (words.length > 1 && /^[{(]$/.test(words[1].text) && !words[0].dynamic) words = words.slice(1);
  if (words[0] && /^[{(]$/.test(words[0].text)) words = words.slice(1);
  if (words.length === 0) return [opaque(cmd, why)];
  return [opaque(cmd, why), ...unwrap(fromWords(words, "coproc"), ctx).map((c) => (c.opaque ? c : opaque(c, why)))];
}

// `watch [options] command…`: the words joined and run by `sh -c`, or as they are with `-x`.
function watch(cmd: SimpleCommand, args: Word[], ctx: Context): SimpleCommand[] {
  const parsed = getopt(args, WATCH);
  if (!parsed.ok) return [opaque(cmd, `\`watch\` ${parsed.reason}`)];
  const rest = args.slice(parsed.next);
  if (rest.length === 0) return [cmd];
  if (rest.some((w) => w.dynamic)) return [opaque(cmd, "`watch` of a command only known at run time")];
  if (parsed.options.some((o) => o.name === "-x" || o.name === "--exec"))
    return [cmd, ...unwrap(fromWords(rest, "watch"), ctx)];
  return [cmd, ...inner(ctx.analyse(rest.map((w) => w.text).join(" "), sameStdin(ctx)), "watch")];
}

// `busybox rm -rf /` (or toybox's) runs its applet as the command.
function busybox(cmd: SimpleCommand, args: Word[], ctx: Context, program: string): SimpleCommand[] {
  if (args.length === 0) return [cmd];
  if (args[0].dynamic || args[0].text.startsWith("-"))
    return [opaque(cmd, `\`${program}\` with an applet or option the analysis cannot read`)];
  return [cmd, ...unwrap(fromWords(args, program), ctx)];
}

function shell(cmd: SimpleCommand, args: Word[], ctx: Context, program: string): SimpleCommand[] {
  const found = shellScripts(program, args);
  if ("opaque" in found) return [opaque(cmd, `\`${cmd.argv[0]}\` with ${found.opaque}`)];
  if ("stdin" in found) return stdinScript(cmd, ctx);
  return [cmd, ...found.scripts.flatMap((s) => inner(ctx.analyse(s.text, sameStdin(ctx)), cmd.argv[0]))];
}

// `sudo -s CMD…`, `sudo -i CMD…`: the words run by the target user's shell (a login shell with
// `-i`, which runs its profile first), each escaped but for `$`; without words, a shell that
// reads stdin. sudo stays opaque; what it runs is listed all the same.
function sudoShell(cmd: SimpleCommand, words: Word[], ctx: Context): SimpleCommand[] {
  const why = `\`${cmd.argv[0]}\` starting a shell`;
  if (words.length === 0) return stdinScript(cmd, ctx, why);
  const seen = words.map((w) => (w.text.includes("$") ? { text: w.text, dynamic: true } : w));
  return [opaque(cmd, why), ...unwrap(fromWords(seen, cmd.argv[0]), ctx).map((c) => (c.opaque ? c : opaque(c, why)))];
}

// `env -S 'STRING' ARGS…` splits STRING into words by rules of its own, close to a shell's, and
// runs them with ARGS after. Read as a shell would read it, listed unsure.
function splitString(
  cmd: SimpleCommand,
  rest: Word[],
  options: readonly { name: string; value?: Word }[],
  ctx: Context,
): SimpleCommand[] {
  const why = "`env -S` splits a string into a command by rules of its own";
  const split = options.filter((o) => o.name === "-S" || o.name === "--split-string").map((o) => o.value!);
  if ([...split, ...rest].some((w) => w.dynamic)) return [opaque(cmd, why)];
  const quote = (t: string) => `'${t.replace(/'/g, `'\\''`)}'`;
  const text = [...split.map((w) => w.text), ...rest.map((w) => quote(w.text))].join(" ");
  return [opaque(cmd, why), ...inner(ctx.analyse(text), "env", why)];
}

// `find … -exec cmd {} ;` runs cmd once per match, with the match as an argument.
function find(cmd: SimpleCommand, args: Word[], ctx: Context): SimpleCommand[] {
  const out = [cmd];
  for (let i = 0; i < args.length; i++) {
    if (!/^-(exec|execdir|ok|okdir)$/.test(args[i].text)) continue;
    const end = args.findIndex((w, j) => j > i && (w.text === ";" || w.text === "+"));
    const words = args
      .slice(i + 1, end < 0 ? undefined : end)
      .map((w) => (w.text.includes("{}") ? { text: w.text, dynamic: true } : w));
    if (words.length === 0) continue;
    out.push(...unwrap(fromWords(words, "find"), ctx));
    if (end < 0) break;
    i = end;
  }
  return out;
}
