// Commands that code in another language, given on the line, visibly runs: an interpreter's `-c`,
// `-e` or awk program (`python3 -c 'os.system("rm -rf /")'`, `perl -e 'exec "rm"'`), the code an
// interpreter reads from a here-document, gdb's `-ex 'shell …'` and `-ex 'python …'`, vim's
// `-c '!…'` (and `+…`, `--cmd`), less's `+!…`. Each is listed as an opaque reading (the literal
// text shows it; what else the code does is not known): a deny or ask rule it visibly matches
// decides, and an allow rule never covers it. The program itself stays as it was judged.
import type { SimpleCommand, Word } from "./types";
import type { Context } from "./wrappers";
import { fromWords, inner, opaque, runner } from "./runners";
import { codeReadings, literals, mayRun, type Quoting } from "./code-strings";

type Unwrap = (cmd: SimpleCommand, ctx: Context) => SimpleCommand[];

function quotingOf(program: string): Quoting {
  if (/^perl/.test(program)) return { rawSingle: true, quoteLike: "perl", hashComments: true };
  if (/^(ruby|irb)$/.test(program)) return { rawSingle: true, quoteLike: "ruby", hashComments: true };
  const hashComments = /^(python[0-9.]*|pypy[0-9.]*|g?awk|mawk|nawk|gdb|Rscript|julia|tclsh)$/.test(program);
  return { rawSingle: /^(php[0-9.]*|vim?|nvim|view|ex|gvim|vimdiff)$/.test(program), hashComments };
}

// A word's text as the program gets it: static text, or a `"…"` word bash passes as one word,
// with its `$` left in place (what it expands to is only known at run time).
function codeText(w: Word): string | undefined {
  if (!w.dynamic) return w.text;
  const m = /^"((?:[^"\\]|\\.)*)"$/s.exec(w.text);
  return m ? m[1].replace(/\\([$`"\\\n])/g, "$1") : undefined;
}

const readingOf = (program: string) => `\`${program}\`'s code may run this as a command`;

// The command lines themselves, each analysed as bash would (`system()`, `popen`, `sh -c`).
function lines(texts: readonly string[], program: string, ctx: Context): SimpleCommand[] {
  return texts.flatMap((t) => (t.trim() === "" ? [] : inner(ctx.analyse(t, {}), program, readingOf(program))));
}

/** What code in `codes`, in `program`'s language, may run: readings of its string literals. */
export function codeCommands(codes: readonly string[], program: string, ctx: Context, unwrap: Unwrap): SimpleCommand[] {
  const why = readingOf(program);
  const { scripts, argvs } = codeReadings(codes, quotingOf(program));
  const run = argvs.flatMap((argv) => {
    const words = argv.map((text) => ({ text, dynamic: /[$`@]/.test(text) }));
    return unwrap(fromWords(words, program), ctx).map((c) => (c.opaque ? c : opaque(c, why)));
  });
  return [...lines(scripts, program, ctx), ...run];
}

/** An interpreter's words read as code (its `-c`/`-e` value, awk's program; others only add a
 *  reading), and the code it reads on stdin when the line shows it. */
export function interpreterCommands(
  program: string,
  args: readonly Word[],
  ctx: Context,
  unwrap: Unwrap,
  fromStdin: boolean,
): SimpleCommand[] {
  const codes = fromStdin
    ? ctx.stdin
      ? [ctx.stdin.text]
      : []
    : args.flatMap((w) => {
        const t = codeText(w);
        // `perl -le'system …'`: the code glued to its option, read from its first letter too.
        const glued = t !== undefined && /^-[a-zA-Z]*?[ceE](.+)$/s.exec(t);
        return t === undefined ? [] : glued ? [t, glued[1]] : [t];
      });
  // `python3 -c 'os.system(sys.argv[1])' 'rm -rf /'`, `awk -v c='rm -rf /' '…system(c)…'`:
  // the words code that may run a program is handed (awk's `-v` values too) are readings.
  const handed = fromStdin || !codes.some(mayRun) ? [] : operands(args);
  return [...codeCommands(codes, program, ctx, unwrap), ...lines(handed, program, ctx)];
}

function operands(args: readonly Word[]): string[] {
  return args.flatMap((w, i) => {
    if (w.dynamic || mayRun(w.text)) return [];
    const value = /^-v(.*)$/s.exec(w.text)?.[1] ?? (args[i - 1]?.text === "-v" ? w.text : undefined);
    if (value !== undefined) return [value.slice(value.indexOf("=") + 1)];
    return w.text.startsWith("-") ? [] : [w.text];
  });
}

// gdb's commands given on the line: `-ex`, `-iex` and their long forms, glued or not.
const GDB_EX = /^--?(ex|iex|eval-command|init-eval-command)(=(.*))?$/s;

/** gdb's `shell`/`!`, `pipe`/`|` and `python` commands, and code in any of them. */
export function gdbCommands(args: readonly Word[], ctx: Context, unwrap: Unwrap): SimpleCommand[] {
  const texts: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const m = GDB_EX.exec(args[i].text);
    if (!m) continue;
    const value = m[2] !== undefined ? { text: m[3], dynamic: args[i].dynamic } : args[++i];
    const text = value && codeText(value);
    if (text !== undefined) texts.push(text);
  }
  const shells = texts.flatMap((t) => {
    // `shell CMD` (or any prefix gdb takes for it), `!CMD`; `pipe CMD | SHELL`, `| CMD | SHELL`.
    const sh = /^\s*(?:!|she(?:l|ll)?\b)\s*(.*)$/s.exec(t);
    if (sh) return [sh[1]];
    const pipe = /^\s*(?:\||pipe\b)(?:[^|]*\|)(.*)$/s.exec(t);
    return pipe ? [pipe[1]] : [];
  });
  return [...lines(shells, "gdb", ctx), ...codeCommands(texts, "gdb", ctx, unwrap)];
}

// vim's `:!cmd` (after a range, `silent`, `read`, `write`), `:terminal cmd`: the rest of the
// command is the shell's, `|` included.
const VIM_BANG =
  /(?:^|\|)[\s:]*(?:sil(?:e|en|ent)?!?\s*)?[%.$\d,'<>+-]*\s*(?:(?:r|re|rea|read|w|wr|wri|writ|write)\s*)?!(.*)$/s;
const VIM_TERMINAL = /(?:^|\|)[\s:]*ter(?:m|mi|min|mina|minal)?(?:\s+\+\+\S+)*\s+(.*)$/s;

/** vim's commands given on the line (`-c`, `--cmd`, `+…`) that run a shell or code. */
export function vimCommands(program: string, args: readonly Word[], ctx: Context, unwrap: Unwrap): SimpleCommand[] {
  const texts: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const t = args[i].text;
    if (t === "--") break;
    const value =
      t === "-c" || t === "--cmd" ? args[++i] : t.startsWith("+") ? { ...args[i], text: t.slice(1) } : undefined;
    const text = value && codeText(value);
    if (text !== undefined) texts.push(text);
  }
  // `exe "!rm …"`, `execute '!rm …'`: a string the command runs as an ex command.
  const quoted = texts.flatMap((t) => literals(t, { rawSingle: true }).map((l) => l.text));
  const shells = [...texts, ...quoted].flatMap((t) =>
    [VIM_BANG.exec(t)?.[1], VIM_TERMINAL.exec(t)?.[1]].filter((s) => s !== undefined),
  );
  return [...lines(shells, program, ctx), ...codeCommands(texts, program, ctx, unwrap)];
}

/** less's `+!cmd` (or `++!cmd`): a command it runs before the first page. */
export function lessCommands(args: readonly Word[], ctx: Context): SimpleCommand[] {
  const shells = args.flatMap((w) => {
    const m = /^\+\+?\s*!(.*)$/s.exec(codeText(w) ?? "");
    return m ? [m[1]] : [];
  });
  return lines(shells, "less", ctx);
}

const VIMS = /^(vi|vim|nvim|view|vimdiff|ex|gvim|gview|evim)$/;

/** What an editor or pager runs from its words (vim, less), or undefined when it is neither. */
export function editorCode(
  cmd: SimpleCommand,
  args: readonly Word[],
  ctx: Context,
  unwrap: Unwrap,
  program: string,
): SimpleCommand[] | undefined {
  if (VIMS.test(program)) return [cmd, ...vimCommands(program, args, ctx, unwrap)];
  if (program === "less") return [cmd, ...lessCommands(args, ctx)];
  if (program === "gdb") {
    // Its `--args PROGRAM…` is the runner's; the words before are gdb's own.
    const at = args.findIndex((w) => w.text === "--args");
    const own = gdbCommands(at < 0 ? args : args.slice(0, at), ctx, unwrap);
    return [...(runner(cmd, [...args], ctx, unwrap, program) ?? [cmd]), ...own];
  }
  return undefined;
}
