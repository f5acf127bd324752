// How each known wrapper reads its own options, and how a shell finds the script of `-c`: what
// wrappers.ts needs to know which word is the command a wrapper runs. Taken from each program's
// source (coreutils, util-linux, findutils, sudo, bash and dash's shell.c/options.c); an option
// not listed here makes the wrapper opaque rather than guessed at.
import { getopt, type OptionSpec } from "./getopt";
import type { Word } from "./types";

export interface WrapperSpec {
  options: OptionSpec;
  /** Operands before the command (timeout's duration, chroot's new root). */
  leadingOperands?: number;
  /** What such an operand must look like, else the wrapper may read it otherwise. */
  operandShape?: RegExp;
  /** `NAME=value` words after the options set the command's environment (env, sudo). */
  assignments?: boolean;
  /** Without a command it starts a shell, which reads its script from stdin (chroot, unshare). */
  startsShell?: boolean;
}

const HELP = { help: 0, version: 0 } as const;

export const SHELLS = new Set(["sh", "bash", "zsh", "dash", "ksh", "mksh", "fish", "rbash"]);

/** Paths that name a program's own stdin, as a script to run (`bash /dev/stdin`). */
export const STDIN_FILES = /^\/(dev\/stdin|dev\/fd\/0|proc\/self\/fd\/0)$/;

// Variables whose value changes what a later program is or what it loads and runs.
export const SENSITIVE_VARIABLE =
  /^(PATH|ENV|BASH_ENV|SHELLOPTS|BASHOPTS|PS4|PROMPT_COMMAND|CDPATH|HOME|IFS|EDITOR|VISUAL|PAGER|MANPAGER|LESSOPEN|LESSCLOSE|BROWSER|SSH_ASKPASS|NODE_OPTIONS|NODE_PATH|MAKEFLAGS|GNUMAKEFLAGS|MFLAGS|MAKEFILES|RUBYOPT|RUBYLIB|PERLLIB|XDG_\w+|PERL5\w*|PYTHON\w*|LD_\w+|DYLD_\w+|GIT_\w+|npm_config_\w+|NPM_CONFIG_\w+)$/;

// util-linux setarch (and its links linux32, linux64, i386, x86_64): getopt "+hVv3BFILRSTXZ";
// without a program it starts /bin/sh. `setarch ARCH` takes the architecture first (wrappers.ts).
const SETARCH: WrapperSpec = {
  options: {
    short: "hVv3BFILRSTXZ",
    long: {
      ...Object.fromEntries(
        (
          "32bit fdpic-funcptrs short-inode addr-compat-layout addr-no-randomize whole-seconds sticky-timeouts " +
          "read-implies-exec mmap-page-zero 3gb 4gb uname-2.6 verbose list"
        )
          .split(" ")
          .map((n) => [n, 0 as const]),
      ),
      ...HELP,
    },
  },
  startsShell: true,
};

export const WRAPPERS: Record<string, WrapperSpec> = {
  linux32: SETARCH,
  linux64: SETARCH,
  i386: SETARCH,
  x86_64: SETARCH,
  // gosu and su-exec: `gosu USER[:GROUP] COMMAND…`, no options of their own.
  gosu: { options: { short: "", long: { ...HELP } }, leadingOperands: 1 },
  "su-exec": { options: { short: "" }, leadingOperands: 1 },
  env: {
    options: {
      short: "0iu:C:S:v",
      long: {
        "ignore-environment": 0,
        null: 0,
        unset: 1,
        chdir: 1,
        "split-string": 1,
        "block-signal": 2,
        "default-signal": 2,
        "ignore-signal": 2,
        "list-signal-handling": 0,
        debug: 0,
        ...HELP,
      },
    },
    assignments: true,
  },
  sudo: {
    options: {
      short: "Aa:BbC:c:D:Eeg:Hh::iKklNnPp:R:r:sST:t:U:u:Vv",
      long: {
        askpass: 0,
        "auth-type": 1,
        background: 0,
        bell: 0,
        "close-from": 1,
        "login-class": 1,
        chdir: 1,
        "preserve-env": 2,
        edit: 0,
        group: 1,
        "set-home": 0,
        help: 0,
        host: 1,
        login: 0,
        "remove-timestamp": 0,
        "reset-timestamp": 0,
        list: 0,
        "non-interactive": 0,
        "preserve-groups": 0,
        prompt: 1,
        chroot: 1,
        role: 1,
        stdin: 0,
        shell: 0,
        type: 1,
        "command-timeout": 1,
        "other-user": 1,
        user: 1,
        version: 0,
        validate: 0,
      },
    },
    assignments: true,
  },
  doas: { options: { short: "C:Lnsu:" } },
  // `nice -10 cmd`, `nice --5 cmd`: the old form of an adjustment.
  nice: { options: { short: "n:", long: { adjustment: 1, ...HELP }, extra: /^-[-+]?[0-9]/ } },
  nohup: { options: { short: "", long: { ...HELP } } },
  setsid: { options: { short: "cfwhV", long: { ctty: 0, fork: 0, wait: 0, ...HELP } } },
  time: {
    options: {
      short: "af:o:pqvV",
      long: { append: 0, format: 1, output: 1, portability: 0, quiet: 0, verbose: 0, ...HELP },
    },
  },
  // bash builtins: its own getopt, short options only.
  command: { options: { short: "pvV" } },
  builtin: { options: { short: "" } },
  exec: { options: { short: "cla:" } },
  stdbuf: { options: { short: "i:o:e:", long: { input: 1, output: 1, error: 1, ...HELP } } },
  timeout: {
    options: {
      short: "k:s:fpv",
      long: { "kill-after": 1, signal: 1, foreground: 0, "preserve-status": 0, verbose: 0, ...HELP },
    },
    leadingOperands: 1,
  },
  chroot: {
    options: { short: "", long: { userspec: 1, groups: 1, "skip-chdir": 0, ...HELP } },
    leadingOperands: 1,
    startsShell: true,
  },
  ionice: {
    options: { short: "c:n:p:P:tu:Vh", long: { class: 1, classdata: 1, pid: 1, pgid: 1, ignore: 0, uid: 1, ...HELP } },
  },
  // Newer chrt may take no priority for some policies: a word that is none is not skipped blindly.
  chrt: {
    options: {
      short: "abdD:efiphmoP:T:rRvV",
      long: {
        "all-tasks": 0,
        batch: 0,
        deadline: 0,
        ext: 0,
        fifo: 0,
        idle: 0,
        pid: 0,
        max: 0,
        other: 0,
        rr: 0,
        "sched-runtime": 1,
        "sched-period": 1,
        "sched-deadline": 1,
        "reset-on-fork": 0,
        verbose: 0,
        ...HELP,
      },
    },
    leadingOperands: 1,
    operandShape: /^[0-9]+$/,
  },
  taskset: {
    options: { short: "apchV", long: { "all-tasks": 0, pid: 0, "cpu-list": 0, ...HELP } },
    leadingOperands: 1,
  },
  // GNU findutils: `-e`, `-i` and `-l` take their value only glued (`-i{}`), as their long forms.
  xargs: {
    options: {
      short: "0a:E:e::hi::I:l::L:n:oprs:txP:d:",
      long: {
        null: 0,
        "arg-file": 1,
        delimiter: 1,
        eof: 2,
        replace: 2,
        "max-lines": 2,
        "max-args": 1,
        "open-tty": 0,
        interactive: 0,
        "no-run-if-empty": 0,
        "max-chars": 1,
        verbose: 0,
        "show-limits": 0,
        exit: 0,
        "max-procs": 1,
        "process-slot-var": 1,
        ...HELP,
      },
    },
  },
  // util-linux (sys-utils/*.c): a `--x[=v]` option takes its value only glued.
  unshare: {
    options: {
      short: "fhVmuinpCTUrR:w:S:G:cl:",
      long: {
        ...namespaces(2),
        fork: 0,
        "kill-child": 2,
        "forward-signals": 0,
        "mount-proc": 2,
        "mount-binfmt": 2,
        "map-user": 1,
        "map-users": 1,
        "map-group": 1,
        "map-groups": 1,
        "map-root-user": 0,
        "map-current-user": 0,
        "map-auto": 0,
        "map-subids": 0,
        owner: 1,
        propagation: 1,
        setgroups: 1,
        "keep-caps": 0,
        setuid: 1,
        setgid: 1,
        root: 1,
        wd: 1,
        monotonic: 1,
        boottime: 1,
        "load-interp": 1,
        "clear-env": 0,
        "whitelist-env": 1,
        ...HELP,
      },
    },
    startsShell: true,
  },
  nsenter: {
    options: {
      short: "ahVt:m::u::i::n::N:p::C::U::T::S:G:r::w::W::ecFZ",
      long: {
        ...namespaces(2),
        all: 0,
        target: 1,
        "net-socket": 1,
        setuid: 1,
        setgid: 1,
        root: 2,
        wd: 2,
        wdns: 2,
        env: 0,
        "no-fork": 0,
        "join-cgroup": 0,
        "preserve-credentials": 0,
        "keep-caps": 0,
        "user-parent": 0,
        "follow-context": 0,
        ...HELP,
      },
    },
    startsShell: true,
  },
  setpriv: {
    options: {
      short: "dhV",
      long: {
        dump: 0,
        nnp: 0,
        "no-new-privs": 0,
        "list-caps": 0,
        "clear-groups": 0,
        "keep-groups": 0,
        "init-groups": 0,
        "landlock-support": 0,
        "list-landlock-access": 0,
        "reset-env": 0,
        ...Object.fromEntries(
          (
            "inh-caps ambient-caps ruid euid rgid egid reuid regid groups bounding-set securebits pdeathsig " +
            "ptracer selinux-label apparmor-profile landlock-access landlock-rule list-landlock-rights seccomp-filter"
          )
            .split(" ")
            .map((n) => [n, 1 as const]),
        ),
        ...HELP,
      },
    },
  },
  prlimit: {
    options: {
      short: "c::d::e::f::i::l::m::n::q::r::s::t::u::v::x::y::p:o:vVh",
      long: {
        ...Object.fromEntries(
          "as core cpu data fsize locks memlock msgqueue nice nofile nproc rss rtprio rttime sigpending stack"
            .split(" ")
            .map((n) => [n, 2 as const]),
        ),
        pid: 1,
        output: 1,
        noheadings: 0,
        raw: 0,
        verbose: 0,
        ...HELP,
      },
    },
  },
};

function namespaces(kind: 0 | 1 | 2): Record<string, 0 | 1 | 2> {
  return Object.fromEntries(["mount", "uts", "ipc", "net", "pid", "user", "cgroup", "time"].map((n) => [n, kind]));
}

// procps-ng watch; `-d` takes its value only glued.
export const WATCH: OptionSpec = {
  short: "bcCd::eghn:pq:rs:twvx",
  long: {
    beep: 0,
    color: 0,
    "no-color": 0,
    differences: 2,
    errexit: 0,
    chgexit: 0,
    equexit: 1,
    interval: 1,
    precise: 0,
    "no-rerun": 0,
    shotsdir: 1,
    "no-title": 0,
    "no-wrap": 0,
    exec: 0,
    ...HELP,
  },
};

/** `stdin`: the shell reads its script from its standard input (`sh`, `bash -s`, `sh -s a b`). */
export type Scripts = { scripts: Word[] } | { stdin: true } | { opaque: string };

/** The scripts `sh -c` and friends run: every shell's own reading of its options. */
export function shellScripts(program: string, args: readonly Word[]): Scripts {
  return program === "fish" ? fishScripts(args) : posixScript(args);
}

// bash's long options (shell.c's long_args), read first and by exact name, `--x` or `-x`.
const BASH_LONG: Record<string, 0 | 1> = {
  debug: 0,
  debugger: 0,
  "dump-po-strings": 0,
  "dump-strings": 0,
  help: 0,
  "init-file": 1,
  login: 0,
  noediting: 0,
  noprofile: 0,
  norc: 0,
  posix: 0,
  "pretty-print": 0,
  protected: 0,
  rcfile: 1,
  restricted: 0,
  verbose: 0,
  version: 0,
};
// Single-letter options of bash and dash (`set` flags and invocation ones) that take no value.
const FLAGS = new Set("abefhkmnptuvxBCEHPTilrsDIqV");

// bash, dash, ksh: `-` or `+` option clusters, before and after `-c`; `o` and `O` take the next
// word; `-` or `--` ends them; the first word after them is the script, or the name of a file
// to run unless `-s` said to read it from stdin, as with no word at all. zsh and ksh know more
// letters: one not listed here is opaque.
function posixScript(args: readonly Word[]): Scripts {
  const fail = (why: string): Scripts => ({ opaque: why });
  let rcfile = false;
  let i = 0;
  for (; i < args.length && !args[i].dynamic; i++) {
    const t = args[i].text;
    const name = t.startsWith("--") ? t.slice(2) : t.startsWith("-") ? t.slice(1) : undefined;
    if (name === undefined || !Object.hasOwn(BASH_LONG, name)) {
      if (t.startsWith("--") && t !== "--") return fail(`an option it does not know (\`${t}\`)`);
      break;
    }
    if (BASH_LONG[name] === 1) {
      rcfile ||= name === "rcfile" || name === "init-file";
      if (!args[i + 1] || (args[i + 1].dynamic && !args[i + 1].oneWord))
        return fail(`the value of \`${t}\` only known at run time`);
      i++;
    }
  }
  let command = false;
  let stdin = false;
  while (i < args.length) {
    const w = args[i];
    if (w.dynamic) return fail("an option only known at run time");
    const t = w.text;
    if (t === "-" || t === "--") {
      i++;
      break;
    }
    if (!t.startsWith("-") && !t.startsWith("+")) break;
    i++;
    for (let k = 1; k < t.length; k++) {
      const c = t[k];
      if (c === "c") command = true;
      // An interactive bash runs the file `--rcfile` names first.
      else if (c === "i" && rcfile) return fail("`-i` and a file it runs first");
      else if (c === "s") {
        // What `+s` does differs between shells: not followed.
        if (t[0] === "+") return fail("`+s`");
        stdin = true;
      } else if (c === "o" || c === "O") {
        // bash takes the next word; zsh would take the rest of this one.
        if (k !== t.length - 1) return fail(`an option cluster it cannot read (\`${t}\`)`);
        if (!args[i] || (args[i].dynamic && !args[i].oneWord))
          return fail(`the value of \`-${c}\` only known at run time`);
        i++;
      } else if (!FLAGS.has(c)) return fail(`an option it does not know (\`-${c}\`)`);
    }
  }
  // `bash /dev/stdin` reads its script from stdin as `bash -s` does.
  const fromStdin = stdin || i >= args.length || (!args[i].dynamic && STDIN_FILES.test(args[i].text));
  if (!command) return fromStdin ? { stdin: true } : fail("a script the analysis cannot read");
  const script = args[i];
  if (!script || script.dynamic) return fail("text only known at run time");
  return { scripts: [script] };
}

// fish: getopt_long, where `-c` takes its value like any option, and every `-c` and `-C` runs.
const FISH: OptionSpec = {
  short: "hPilNnvc:C:p:d:f:D:o:",
  long: {
    command: 1,
    "init-command": 1,
    debug: 1,
    "debug-output": 1,
    "debug-stack-frames": 1,
    interactive: 0,
    login: 0,
    "no-config": 0,
    "no-execute": 0,
    "print-rusage-self": 0,
    "print-debug-categories": 0,
    private: 0,
    profile: 1,
    "profile-startup": 1,
    features: 1,
    ...HELP,
  },
};

function fishScripts(args: readonly Word[]): Scripts {
  const parsed = getopt(args, FISH);
  if (!parsed.ok) return { opaque: parsed.reason.replace(/^with /, "") };
  const scripts = parsed.options
    .filter((o) => ["-c", "-C", "--command", "--init-command"].includes(o.name))
    .map((o) => o.value!);
  if (!parsed.options.some((o) => o.name === "-c" || o.name === "--command"))
    return { opaque: "a script the analysis cannot read" };
  if (scripts.some((s) => s.dynamic)) return { opaque: "text only known at run time" };
  return { scripts };
}
