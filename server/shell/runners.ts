// Programs that run a command handed to them as a string, as their last words or on stdin,
// beyond the plain wrappers of wrapper-options.ts: su and runuser, script, flock, systemd-run,
// `sudo -s`, `env -S`, a shell that reads its script from stdin, and programs whose options the
// analysis does not read (GNU parallel, strace, fakeroot, ...). What each runs is listed like a
// wrapper's command (wrappers.ts). Where the analysis cannot be sure which words that is, or
// what else runs with it (a login profile, a config file), the runner stays opaque and what it
// may run is listed as opaque too: a rule that visibly matches one still decides, and nothing
// is allowed on a guess.
import type { SimpleCommand, ShellAnalysis, Word } from "./types";
import type { Context } from "./wrappers";
import { getopt, getoptPermuted, type OptionSpec } from "./getopt";
import { SENSITIVE_VARIABLE, shellScripts, SHELLS } from "./wrapper-options";

type Unwrap = (cmd: SimpleCommand, ctx: Context) => SimpleCommand[];

export const opaque = (cmd: SimpleCommand, reason: string): SimpleCommand => ({ ...cmd, opaque: reason });

export function fromWords(words: readonly Word[], wrapper: string): SimpleCommand {
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

export function inner(analysis: ShellAnalysis, wrapper: string, unsure?: string): SimpleCommand[] {
  return analysis.commands.map((c) => ({
    ...c,
    wrappedBy: wrapper,
    ranges: undefined,
    ...(unsure && !c.opaque ? { opaque: unsure } : {}),
  }));
}

/** A script run with the stdin of the command that runs it (`sh -c`, `eval`, `su -c`). */
export const sameStdin = (ctx: Context) => ({ fed: ctx.fed, ...(ctx.stdin ? { stdin: ctx.stdin } : {}) });

// Commands that reach past the analysis's guess are marked so.
const unsureOf = (list: SimpleCommand[], why: string) => list.map((c) => (c.opaque ? c : opaque(c, why)));

/** A shell reading its script from stdin: the text the line feeds it (stdin.ts), or opaque. The
 *  script's own stdin is the rest of that text, so a program in it that reads stdin is fed. */
export function stdinScript(cmd: SimpleCommand, ctx: Context, unsure?: string): SimpleCommand[] {
  if (!ctx.stdin) return [opaque(cmd, unsure ?? `\`${cmd.argv[0]}\` with a script the analysis cannot read`)];
  const why = ctx.stdin.exact ? unsure : "what the line feeds it is only known in part";
  return [why ? opaque(cmd, why) : cmd, ...inner(ctx.analyse(ctx.stdin.text, { fed: true }), cmd.argv[0], why)];
}

function strings(cmd: SimpleCommand, scripts: readonly Word[], ctx: Context, unsure?: string): SimpleCommand[] {
  const program = cmd.argv[0];
  if (scripts.some((s) => s.dynamic)) return [opaque(cmd, `\`${program}\` of a command only known at run time`)];
  const run = (s: Word) => inner(ctx.analyse(s.text, sameStdin(ctx)), program, unsure);
  return [unsure ? opaque(cmd, unsure) : cmd, ...scripts.flatMap(run)];
}

const SU: OptionSpec = {
  short: "c:fg:G:lmpPTs:u:hVw:",
  long: {
    command: 1,
    "session-command": 1,
    fast: 0,
    login: 0,
    "preserve-environment": 0,
    pty: 0,
    "no-pty": 0,
    shell: 1,
    group: 1,
    "supp-group": 1,
    user: 1,
    "whitelist-environment": 1,
    help: 0,
    version: 0,
  },
};

// su-common.c: options anywhere; `-` then the user; what follows the user goes to the shell
// after `-c COMMAND`, so without one the shell reads those words as its own options or script.
function su(cmd: SimpleCommand, args: Word[], ctx: Context, unwrap: Unwrap, program: string): SimpleCommand[] {
  const parsed = getoptPermuted(args, SU);
  if (!parsed.ok) return [opaque(cmd, `\`${program}\` ${parsed.reason}`)];
  const names = parsed.options.map((o) => o.name);
  const shell = parsed.options.filter((o) => o.name === "-s" || o.name === "--shell").at(-1)?.value;
  if (shell && (shell.dynamic || !SHELLS.has(shell.text.slice(shell.text.lastIndexOf("/") + 1))))
    return [opaque(cmd, `\`${program} -s\` runs the program it names`)];
  const operands = [...parsed.operands, ...(parsed.afterDashes ?? [])];
  if (names.some((n) => n === "-u" || n === "--user")) {
    if (program !== "runuser" || operands.length === 0) return [cmd];
    return [cmd, ...unwrap(fromWords(operands, program), ctx)];
  }
  const commands = parsed.options.filter((o) => /^(-c|-C|--command|--session-command)$/.test(o.name));
  if (commands.length > 0) return strings(cmd, [commands.at(-1)!.value!], ctx);
  // `su -- root -c 'cmd'`: the shell reads the words as its own options.
  const found = shellScripts("sh", operands.slice(operands[0]?.text === "-" ? 2 : 1));
  if ("opaque" in found) return [opaque(cmd, `\`${program}\`'s shell with ${found.opaque}`)];
  return "stdin" in found ? stdinScript(cmd, ctx) : strings(cmd, found.scripts, ctx);
}

const SCRIPT: OptionSpec = {
  short: "aB:c:eE:fI:O:o:qm:T:t::Vh",
  long: {
    append: 0,
    command: 1,
    echo: 1,
    return: 0,
    flush: 0,
    force: 0,
    "log-in": 1,
    "log-out": 1,
    "log-io": 1,
    "log-timing": 1,
    "logging-format": 1,
    "output-limit": 1,
    quiet: 0,
    timing: 2,
    version: 0,
    help: 0,
  },
};

// util-linux script: `-c COMMAND`, or the words after `--` joined, run by `$SHELL -c`; with
// neither, an interactive shell reads what script reads.
function script(cmd: SimpleCommand, args: Word[], ctx: Context): SimpleCommand[] {
  const parsed = getoptPermuted(args, SCRIPT);
  if (!parsed.ok) return [opaque(cmd, `\`script\` ${parsed.reason}`)];
  const scripts = parsed.options.filter((o) => o.name === "-c" || o.name === "--command").map((o) => o.value!);
  const rest = parsed.afterDashes ?? [];
  if (rest.length > 0) {
    if (rest.some((w) => w.dynamic)) return [opaque(cmd, "`script` of a command only known at run time")];
    scripts.push({ text: rest.map((w) => w.text).join(" "), dynamic: false });
  }
  return scripts.length > 0 ? strings(cmd, scripts, ctx) : stdinScript(cmd, ctx);
}

const FLOCK: OptionSpec = {
  short: "sexnoFuw:E:hV",
  long: {
    shared: 0,
    exclusive: 0,
    unlock: 0,
    nonblocking: 0,
    nb: 0,
    timeout: 1,
    wait: 1,
    "conflict-exit-code": 1,
    close: 0,
    "no-fork": 0,
    verbose: 0,
    fcntl: 0,
    start: 1,
    length: 1,
    fd: 1,
    help: 0,
    version: 0,
  },
};

// `flock [options] FILE -c COMMAND` runs it with `sh -c`, `flock [options] FILE CMD…` runs CMD,
// `--fd N CMD…` too; `flock N` only locks. A `-c` before FILE is not followed.
function flock(cmd: SimpleCommand, args: Word[], ctx: Context, unwrap: Unwrap): SimpleCommand[] {
  const parsed = getopt(args, FLOCK);
  if (!parsed.ok) return [opaque(cmd, `\`flock\` ${parsed.reason}`)];
  const words = args.slice(parsed.next);
  if (parsed.options.some((o) => o.name === "--fd"))
    return words.length > 0 ? [cmd, ...unwrap(fromWords(words, "flock"), ctx)] : [cmd];
  if (words.length < 2) return [cmd];
  // A run-time second word may be `-c`, which makes the third a script.
  if ((words[0].dynamic && !words[0].oneWord) || words[1].dynamic)
    return [opaque(cmd, "`flock` with a word only known at run time where its command may be")];
  if (words[1].text === "-c" || words[1].text === "--command") return strings(cmd, words.slice(2), ctx);
  return [cmd, ...unwrap(fromWords(words.slice(1), "flock"), ctx)];
}

const SYSTEMD_RUN: OptionSpec = {
  short: "hrC:H:M:E:p:tPqGdSu:",
  long: {
    ...Object.fromEntries(
      (
        "capsule unit description slice expand-environment host machine service-type uid gid nice setenv " +
        "property on-active on-boot on-startup on-unit-active on-unit-inactive on-calendar timer-property " +
        "path-property socket-property working-directory job-mode background json"
      )
        .split(" ")
        .map((n) => [n, 1 as const]),
    ),
    ...Object.fromEntries(
      (
        "version user system scope slice-inherit remain-after-exit send-sighup wait tty pty pipe quiet " +
        "on-timezone-change on-clock-change no-block no-ask-password collect same-dir shell ignore-failure help"
      )
        .split(" ")
        .map((n) => [n, 0 as const]),
    ),
  },
};

// systemd-run runs its words as a unit's command, where systemd expands `$NAME` itself. A unit
// property can add commands (`-p ExecStartPre=…`), and `-H` runs on another machine.
function systemdRun(cmd: SimpleCommand, args: Word[], ctx: Context, unwrap: Unwrap): SimpleCommand[] {
  const parsed = getopt(args, SYSTEMD_RUN);
  if (!parsed.ok) return [opaque(cmd, `\`systemd-run\` ${parsed.reason}`)];
  const names = parsed.options.map((o) => o.name);
  if (names.some((n) => /^(-p|--(\w+-)?property)$/.test(n)))
    return [opaque(cmd, "a `systemd-run` unit property can run other commands")];
  if (names.some((n) => /^(-H|--host|-S|--shell)$/.test(n)))
    return [opaque(cmd, "`systemd-run` runs a shell, or on another machine")];
  const env = parsed.options.filter((o) => o.name === "-E" || o.name === "--setenv").map((o) => o.value!);
  if (env.some((v) => v.dynamic || SENSITIVE_VARIABLE.test(v.text.replace(/=.*$/s, ""))))
    return [opaque(cmd, "`systemd-run -E` sets a variable that changes what the program runs")];
  const words = args.slice(parsed.next).map((w) => (w.text.includes("$") ? { text: w.text, dynamic: true } : w));
  return words.length > 0 ? [cmd, ...unwrap(fromWords(words, "systemd-run"), ctx)] : [cmd];
}

// Where a program whose options the analysis does not read may start its command: after a
// `--`, else the first word that is no option or a later one, when one before was an option's
// value (`strace -o log cmd`) or an operand (`faketime DATE cmd`). Up to four are tried.
function starts(args: readonly Word[]): number[] {
  const dashes = args.findIndex((w) => w.text === "--");
  if (dashes >= 0 && args.slice(0, dashes).every((w) => w.text.startsWith("-"))) return [dashes + 1];
  const at: number[] = [];
  for (let i = 0; i < args.length && at.length < 4; i++)
    if (args[i].dynamic || !args[i].text.startsWith("-")) at.push(i);
  return at;
}

export function guessed(cmd: SimpleCommand, args: Word[], ctx: Context, unwrap: Unwrap, why: string): SimpleCommand[] {
  return [opaque(cmd, why), ...starts(args).flatMap((at) => guess(args.slice(at), cmd, ctx, unwrap, why))];
}

function guess(words: Word[], cmd: SimpleCommand, ctx: Context, unwrap: Unwrap, why: string): SimpleCommand[] {
  return words.length > 0 ? unsureOf(unwrap(fromWords(words, cmd.argv[0]), ctx), why) : [];
}

// GNU parallel: options also come from `$PARALLEL` and profile files. It joins the command's
// words and has a shell run them, with each argument after `:::` quoted; with no command, each
// argument (or line of its input) is a command line itself.
function parallel(cmd: SimpleCommand, args: Word[], ctx: Context, unwrap: Unwrap): SimpleCommand[] {
  const why = "`parallel` reads options the line does not show, and builds its commands from its input";
  if (args.some((w) => /^(-S|--sshlogin|--slf|--sshloginfile)/.test(w.text)))
    return [opaque(cmd, "`parallel` runs commands on other machines")];
  const end = args.findIndex((w) => /^::::?\+?$/.test(w.text));
  const head = end < 0 ? args : args.slice(0, end);
  const out = [opaque(cmd, why)];
  const at = starts(head);
  for (const words of at.map((i) => head.slice(i))) {
    if (words.some((w) => w.dynamic)) out.push(...guess(words, cmd, ctx, unwrap, why));
    else out.push(...inner(ctx.analyse(words.map((w) => w.text).join(" ")), "parallel", why));
  }
  if (at.length > 0) return out;
  // No command: each argument of a `:::` list, or each line of its input, is one.
  let list = false;
  for (const w of end < 0 ? [] : args.slice(end)) {
    if (/^::::?\+?$/.test(w.text)) list = w.text.startsWith(":::") && !w.text.startsWith("::::");
    else if (list && !w.dynamic) out.push(...inner(ctx.analyse(w.text), "parallel", why));
  }
  if (end < 0 && ctx.stdin) out.push(...inner(ctx.analyse(ctx.stdin.text), "parallel", why));
  return out;
}

// Programs that run their last words as a command, with options the analysis does not read.
const GUESSED = new Set(
  (
    "strace ltrace valgrind faketime firejail proot fakeroot chronic unbuffer eatmydata nocache cpulimit " +
    "bwrap chpst daemonize start-stop-daemon runcon catchsegv dbus-run-session pkexec caffeinate ifne " +
    "entr torsocks proxychains proxychains4 rlwrap sshpass perf numactl xvfb-run tini dumb-init cgexec " +
    "trickle timelimit run-one mpirun mpiexec srun optirun primusrun prime-run vglrun torify aa-exec heaptrack " +
    "memusage uvx"
  ).split(" "),
);

/** What a runner runs, or undefined when `cmd` is no runner this module knows. */
export function runner(
  cmd: SimpleCommand,
  args: Word[],
  ctx: Context,
  unwrap: Unwrap,
  program: string,
): SimpleCommand[] | undefined {
  switch (program) {
    case "su":
    case "runuser":
      return su(cmd, args, ctx, unwrap, program);
    case "script":
      return script(cmd, args, ctx);
    case "flock":
      return flock(cmd, args, ctx, unwrap);
    case "systemd-run":
      return systemdRun(cmd, args, ctx, unwrap);
    case "parallel":
      return parallel(cmd, args, ctx, unwrap);
    case "sg": {
      // shadow's sg: `sg GROUP [-c] COMMAND`, run by `/bin/sh -c`.
      const words = args.slice(1).filter((w) => w.text !== "-c");
      if (args.length < 2 || args[0].dynamic)
        return [opaque(cmd, "`sg` with a group or command the analysis cannot read")];
      return strings(cmd, words, ctx, "`sg` runs its words as a command the analysis only guesses at");
    }
    case "gdb": {
      // `gdb --args PROGRAM ARGS…` runs them (under `-ex run`); without it gdb only loads a file.
      const at = args.findIndex((w) => w.text === "--args");
      if (at < 0) return [cmd];
      return guessed(cmd, args.slice(at + 1), ctx, unwrap, "`gdb --args` runs a command the analysis only guesses at");
    }
    case "nix-shell":
      return nixShell(cmd, args, ctx);
    case "nix":
    case "ip":
    case "uv": {
      // `nix develop -c CMD…`, `nix shell PKG -c CMD…`, `ip netns exec NS CMD…`, `uv run CMD…`,
      // `uv tool run CMD…`: the words after the marker, read as a guess.
      const marker = { nix: /^(-c|--command)$/, ip: /^exec$/, uv: /^run$/ }[program];
      const at = args.findIndex((w) => marker.test(w.text));
      if (at < 0 || (program === "ip" && !args.slice(0, at).some((w) => w.text === "netns"))) return [cmd];
      // The guess tries the words after `ip netns exec NAME` (or `-all` with no name) too.
      const words = args.slice(at + 1);
      return guessed(cmd, words, ctx, unwrap, `\`${program}\` runs a command the analysis only guesses at`);
    }
    case "hyperfine":
      return hyperfine(cmd, args, ctx);
    default:
      if (GUESSED.has(program))
        return guessed(cmd, args, ctx, unwrap, `\`${program}\` runs a command the analysis only guesses at`);
      return undefined;
  }
}

// nix-shell runs `--run`/`--command` text in bash, after the environment's own hooks
// (`shellHook`), which the line does not show; without either it starts an interactive shell.
function nixShell(cmd: SimpleCommand, args: Word[], ctx: Context): SimpleCommand[] {
  const why = "`nix-shell` also runs its environment's hooks";
  const texts: Word[] = [];
  for (let i = 0; i < args.length; i++) {
    const t = args[i].text;
    if (t === "--run" || t === "--command") texts.push(args[++i] ?? { text: "", dynamic: true });
  }
  return texts.length > 0 ? strings(cmd, texts, ctx, why) : [opaque(cmd, why)];
}

// hyperfine runs each operand, and the values of --prepare, --setup, --cleanup, --conclude,
// with a shell. Its options are not all read: every static word that is no option is analysed
// as a command, and the runner stays opaque.
function hyperfine(cmd: SimpleCommand, args: Word[], ctx: Context): SimpleCommand[] {
  const why = "`hyperfine` runs commands the analysis only guesses at";
  const texts = args
    .filter((w) => !w.dynamic && (!w.text.startsWith("-") || /^--[\w-]+=/.test(w.text)))
    .map((w) => (w.text.startsWith("-") ? w.text.slice(w.text.indexOf("=") + 1) : w.text));
  return [opaque(cmd, why), ...texts.flatMap((t) => inner(ctx.analyse(t), "hyperfine", why))];
}
