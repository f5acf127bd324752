// Commands that run other commands. Known wrappers (`env`, `timeout`, `nohup`, `sudo`, `xargs`,
// `find -exec`, ...) are looked through: the wrapper is listed (a rule may name it) and so is
// the command it runs. A static `sh -c '…'`, `eval '…'` or `watch '…'` string is analysed in
// turn; anything these run that cannot be read from the line is opaque.
import type { SimpleCommand, ShellAnalysis, Word } from "./types";

export interface Context {
  /** stdin is a pipe or a redirect. */
  fed: boolean;
  depth: number;
  /** Analyses a string bash will itself parse (sh -c, eval). */
  analyse(text: string): ShellAnalysis;
}

// Options that take a separate value, so `timeout -s KILL 5 rm x` skips `KILL`; leading
// operands are skipped too (timeout's duration).
const WRAPPERS: Record<string, { argOptions: string[]; leadingOperands?: number }> = {
  env: { argOptions: ["-u", "--unset", "-C", "--chdir"] },
  sudo: { argOptions: ["-u", "-g", "-h", "-p", "-C", "-D", "-U", "-r", "-t", "-T"] },
  doas: { argOptions: ["-u", "-C"] },
  nice: { argOptions: ["-n", "--adjustment"] },
  nohup: { argOptions: [] },
  setsid: { argOptions: [] },
  time: { argOptions: ["-f", "-o"] },
  command: { argOptions: [] },
  builtin: { argOptions: [] },
  exec: { argOptions: ["-a"] },
  stdbuf: { argOptions: ["-i", "-o", "-e"] },
  timeout: { argOptions: ["-s", "--signal", "-k", "--kill-after"], leadingOperands: 1 },
  chroot: { argOptions: ["--userspec", "--groups"], leadingOperands: 1 },
  ionice: { argOptions: ["-c", "-n", "-p"] },
  chrt: { argOptions: [], leadingOperands: 1 },
  taskset: { argOptions: [], leadingOperands: 1 },
  xargs: {
    argOptions: [
      "-n",
      "-L",
      "-P",
      "-I",
      "-i",
      "-d",
      "-E",
      "-e",
      "-s",
      "-a",
      "--max-args",
      "--max-procs",
      "--delimiter",
      "--arg-file",
      "--replace",
    ],
  },
};

export const SHELLS = new Set(["sh", "bash", "zsh", "dash", "ksh", "mksh", "fish", "busybox", "rbash"]);
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
// Programs that run a command built from their arguments in a way not followed here.
for (const p of [
  "parallel",
  "su",
  "runuser",
  "script",
  "flock",
  "unshare",
  "nsenter",
  "firejail",
  "strace",
  "ltrace",
  "valgrind",
  "faketime",
  "proot",
  "setpriv",
  "prlimit",
  "systemd-run",
  "ssh",
  "tmux",
  "screen",
  "expect",
  "at",
  "batch",
  "dbus-run-session",
  "pkexec",
  "fakeroot",
  "chronic",
  "unbuffer",
  "sg",
  "caffeinate",
  "entr",
  "ifne",
  "sshpass",
  "torsocks",
  "proxychains",
  "proxychains4",
  "rlwrap",
  "eatmydata",
  "nocache",
  "cpulimit",
  "bwrap",
  "chpst",
  "daemonize",
  "start-stop-daemon",
  "runcon",
  "catchsegv",
]) {
  OPAQUE[p] = "it runs a command the analysis does not follow";
}

// Builtins that take variable names: a name only known at run time can carry `a[$(cmd)]`.
const NAME_TAKERS = new Set(["read", "printf", "wait", "getopts", "test", "["]);

const opaque = (cmd: SimpleCommand, reason: string): SimpleCommand => ({ ...cmd, opaque: reason });

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

function fromWords(words: Word[], wrapper: string): SimpleCommand {
  const program = words[0].dynamic ? words[0].text : words[0].text.slice(words[0].text.lastIndexOf("/") + 1);
  return {
    argv: [program, ...words.slice(1).map((w) => w.text)],
    words,
    assignments: [],
    source: words.map((w) => w.text).join(" "),
    programPath: !words[0].dynamic && words[0].text.includes("/"),
    wrappedBy: wrapper,
    ...(words[0].dynamic ? { opaque: "the program is only known at run time" } : {}),
  };
}

function inner(analysis: ShellAnalysis, wrapper: string): SimpleCommand[] {
  return analysis.commands.map((c) => ({ ...c, wrappedBy: wrapper, ranges: undefined }));
}

// Options that hand an interpreter its program inline.
const INLINE_CODE = /^(-[a-zA-Z]*[ceEr]|--eval|--exec|-p|--print|eval)$/;
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

const isAssignment = (w: Word) => !w.dynamic && /^[A-Za-z_][A-Za-z0-9_]*=/.test(w.text);
// Variables whose value changes what a later program is or what it loads and runs.
export const SENSITIVE_VARIABLE =
  /^(PATH|ENV|BASH_ENV|SHELLOPTS|BASHOPTS|PS4|PROMPT_COMMAND|CDPATH|HOME|IFS|EDITOR|VISUAL|PAGER|MANPAGER|LESSOPEN|LESSCLOSE|BROWSER|SSH_ASKPASS|NODE_OPTIONS|NODE_PATH|RUBYOPT|RUBYLIB|PERLLIB|XDG_\w+|PERL5\w*|PYTHON\w*|LD_\w+|DYLD_\w+|GIT_\w+|npm_config_\w+|NPM_CONFIG_\w+)$/;

/** `cmd` and whatever it runs in turn. */
export function unwrap(cmd: SimpleCommand, ctx: Context): SimpleCommand[] {
  if (cmd.opaque || cmd.argv.length === 0) return [cmd];
  const [program] = cmd.argv;
  const args = cmd.words.slice(1);
  const staticArgs = args.every((w) => !w.dynamic);
  if (Object.hasOwn(OPAQUE, program)) return [opaque(cmd, `\`${program}\`: ${OPAQUE[program]}`)];
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
    return [cmd, ...inner(ctx.analyse(args.map((w) => w.text).join(" ")), "eval")];
  }
  if (program === "watch") {
    const rest = args.filter(
      (w, i) => !(w.text.startsWith("-") || (i > 0 && ["-n", "-d", "--interval"].includes(args[i - 1].text))),
    );
    if (rest.length === 0) return [cmd];
    if (rest.some((w) => w.dynamic)) return [opaque(cmd, "`watch` of a command only known at run time")];
    return [cmd, ...inner(ctx.analyse(rest.map((w) => w.text).join(" ")), "watch")];
  }
  if (SHELLS.has(program)) return shell(cmd, args, ctx);
  if (INTERPRETERS.test(program)) {
    const script = args.find((w) => !w.text.startsWith("-") || w.text === "-");
    if ((ctx.fed && (!script || script.text === "-")) || script?.text === "-")
      return [opaque(cmd, `\`${program}\` runs a program read from its input`)];
    if (/awk$/.test(program) || args.some((w) => INLINE_CODE.test(w.text)))
      return [{ ...cmd, runsCode: `\`${program}\` runs code given on the line` }];
    return [cmd];
  }
  if (program === "sed" && args.some(sedScriptRuns))
    return [{ ...cmd, runsCode: "a sed script can run commands (`e`)" }];
  if (program === "git") return [git(cmd, args)];
  if (program === "find") return find(cmd, args, ctx);
  const wrapper = Object.hasOwn(WRAPPERS, program) ? WRAPPERS[program] : undefined;
  if (!wrapper) return [cmd];
  if (program === "command" && args.some((w) => /^-[a-zA-Z]*[vV]/.test(w.text))) return [cmd];
  let i = 0;
  let operands = wrapper.leadingOperands ?? 0;
  while (i < args.length) {
    const w = args[i];
    if (w.dynamic) return [opaque(cmd, `\`${program}\` with options only known at run time`)];
    if (w.text === "--") {
      i++;
      break;
    }
    if (program === "env" && /^(-S|--split-string)/.test(w.text))
      return [opaque(cmd, "`env -S` splits a string into a command")];
    if (program === "sudo" && /^-[a-zA-Z]*[si]/.test(w.text)) return [opaque(cmd, "`sudo` starting a shell")];
    if (w.text.startsWith("-") && w.text.length > 1) {
      i += wrapper.argOptions.includes(w.text) ? 2 : 1;
      continue;
    }
    if (program === "env" && isAssignment(w)) {
      if (SENSITIVE_VARIABLE.test(w.text.slice(0, w.text.indexOf("="))))
        return [opaque(cmd, `\`env ${w.text.split("=")[0]}=…\` changes what the program runs`)];
      i++;
      continue;
    }
    if (operands > 0) {
      operands--;
      i++;
      continue;
    }
    break;
  }
  // A wrapper with nothing to run is itself the command (`env` prints the environment).
  if (i >= args.length) return [cmd];
  const words = args.slice(i);
  // xargs appends what it reads from its input: arguments nobody can read from the line.
  if (program === "xargs") words.push({ text: "<input of xargs>", dynamic: true });
  return [cmd, ...unwrap(fromWords(words, program), ctx)];
}

function shell(cmd: SimpleCommand, args: Word[], ctx: Context): SimpleCommand[] {
  const c = args.findIndex((w) => !w.dynamic && /^-[a-zA-Z]*c[a-zA-Z]*$/.test(w.text));
  if (c < 0) return [opaque(cmd, `\`${cmd.argv[0]}\` runs a script the analysis cannot read`)];
  const script = args[c + 1];
  if (!script || script.dynamic || args.slice(0, c).some((w) => w.dynamic))
    return [opaque(cmd, `\`${cmd.argv[0]} -c\` of text only known at run time`)];
  return [cmd, ...inner(ctx.analyse(script.text), cmd.argv[0])];
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

// git's global options before the sub-command: `-c` and `--exec-path` can name a program
// (an alias `!sh …`, a pager, fsmonitor) that no rule on the sub-command sees.
function git(cmd: SimpleCommand, args: Word[]): SimpleCommand {
  for (let i = 0; i < args.length && args[i].text.startsWith("-"); i++) {
    const w = args[i].text;
    if (/^(-c|--config-env|--exec-path)/.test(w))
      return opaque(cmd, "`git -c` / `--exec-path` can name a program for git to run");
    if (["-C", "--git-dir", "--work-tree", "--namespace", "--super-prefix"].includes(w)) i++;
  }
  // Sub-commands that run a command given as one word (`git rebase --exec 'git push'`).
  let at = 0;
  while (at < args.length && args[at].text.startsWith("-"))
    at += ["-C", "--git-dir", "--work-tree", "--namespace", "--super-prefix"].includes(args[at].text) ? 2 : 1;
  const sub = args[at]?.text;
  const flags = args.slice(at + 1).map((w) => w.text);
  const words = flags.filter((f) => !f.startsWith("-"));
  const runs =
    (sub === "rebase" && flags.some((f) => /^(-x|--exec)/.test(f) || /^-[a-zA-Z]*x/.test(f))) ||
    (sub === "submodule" && words.includes("foreach")) ||
    (sub === "bisect" && words.includes("run")) ||
    sub === "filter-branch" ||
    (sub === "difftool" && flags.some((f) => /^(-x|--extcmd)/.test(f)));
  if (runs) return opaque(cmd, `\`git ${sub}\` runs a command given on the line`);
  return cmd;
}
