// Judges a shell command line for the shell tool's approval: which lines are plainly read-only
// (every command in every `&&`/`||`/`;`/`|` chain on a known-safe list, no writes through
// redirection, no expansion we cannot see through) and which are dangerous enough that they
// must always be asked about. Anything not recognised is neither: it gets the default (ask).
import { parse, type ParseEntry } from "shell-quote";

type Args = string[];
const any = () => true;
const noArgs = (a: Args) => a.length === 0;
// A one-letter option also hides in a cluster (`sort -no out` is -n -o out) or glued to its value (-oout).
const hasOption = (x: string, b: string) =>
  /^-[a-zA-Z]$/.test(b) ? new RegExp(`^-[a-zA-Z]*${b[1]}`).test(x) && !x.startsWith("--")
  : x === b || (b.startsWith("--") && x.startsWith(`${b}=`));
const without = (...bad: string[]) => (a: Args) => !a.some((x) => bad.some((b) => hasOption(x, b)));
const onlyFlags = (...ok: string[]) => (a: Args) => a.every((x) => ok.includes(x));

const GIT_READ: Record<string, (a: Args) => boolean> = {
  status: any,
  diff: without("--output", "--ext-diff"),
  log: without("--output", "--ext-diff"),
  show: without("--output", "--ext-diff"),
  blame: any,
  "ls-files": any,
  "ls-tree": any,
  "rev-parse": any,
  "cat-file": any,
  shortlog: any,
  describe: any,
  grep: without("-O", "--open-files-in-pager"),
  branch: onlyFlags("-a", "-r", "-v", "-vv", "--list", "--all", "--remotes", "--show-current", "--no-color"),
  tag: onlyFlags("-l", "--list"),
  remote: onlyFlags("-v", "--verbose"),
  stash: (a) => a[0] === "list" || a[0] === "show",
  reflog: (a) => a.length === 0 || a[0] === "show",
  config: (a) => a.length > 0 && ["--get", "--get-all", "--list", "-l", "--get-regexp"].includes(a[0]),
};

function gitIsReadOnly(args: Args): boolean {
  let i = 0;
  // Global options that only change where git looks or whether it pages.
  while (i < args.length && (args[i] === "--no-pager" || args[i] === "-P" || args[i] === "-C")) i += args[i] === "-C" ? 2 : 1;
  const sub = args[i];
  const check = sub ? GIT_READ[sub] : undefined;
  return !!check && check(args.slice(i + 1));
}

// `sed -n '12,40p' file` is how models read a slice; anything else sed can do may write.
const sedPrints = (a: Args) =>
  a.includes("-n") &&
  !a.some((x) => /^(-i|--in-place)/.test(x) || x === "-e" || x === "-f") &&
  a.filter((x) => !x.startsWith("-")).slice(0, 1).every((s) => /^\s*(\d+|\$)(\s*,\s*(\d+|\$))?\s*p\s*$/.test(s));

const SAFE: Record<string, (a: Args) => boolean> = {
  ls: any, pwd: any, cat: any, head: any, tail: any, wc: any, echo: any, printf: any, which: any, file: any,
  stat: any, du: any, df: any, basename: any, dirname: any, realpath: any, readlink: any, whoami: any, id: any,
  uname: any, true: any, false: any, nl: any, tac: any, cut: any, diff: any, cmp: any, comm: any, grep: any,
  egrep: any, fgrep: any, jq: any, printenv: any, seq: any, test: any, "[": any, md5sum: any, sha1sum: any,
  sha256sum: any, strings: any, hexdump: any, cd: any, type: any, tr: any, column: any,
  tree: without("-o"),
  date: without("-s", "--set"),
  hostname: noArgs,
  env: noArgs,
  uniq: (a) => a.filter((x) => !x.startsWith("-")).length <= 1,
  sort: without("-o", "--output", "--compress-program"),
  rg: without("--pre"),
  find: without("-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"),
  sed: sedPrints,
  git: gitIsReadOnly,
};

const CHAIN = new Set(["&&", "||", ";", "|"]);

interface Parsed {
  commands: Args[];
  /** Something the classifier cannot see through (expansion, subshell, background, write). */
  opaque: boolean;
}

function split(line: string): Parsed | undefined {
  // shell-quote reads a newline as a space and leaves backticks inside words: refuse both.
  if (/[\n\r`]/.test(line)) return undefined;
  let entries: ParseEntry[];
  try {
    entries = parse(line, (name) => ({ op: "var", name }) as unknown as string);
  } catch {
    return undefined;
  }
  const commands: Args[] = [[]];
  let opaque = false;
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i];
    if (typeof e === "string") {
      commands[commands.length - 1].push(e);
      continue;
    }
    if ("comment" in e) break;
    const op = (e as { op: string }).op;
    if (op === "glob") commands[commands.length - 1].push((e as { pattern: string }).pattern);
    else if (CHAIN.has(op)) commands.push([]);
    else if (op === "<" || op === "<<<") i++; // reading a file or a string is fine
    else if (op === ">" || op === ">>" || op === ">&") {
      const target = entries[i + 1];
      const harmless = target === "/dev/null" || (op === ">&" && typeof target === "string" && /^\d$/.test(target));
      if (!harmless) opaque = true;
      i++;
    } else opaque = true; // var, (, ), &, |&, <(, ;;
  }
  return { commands: commands.filter((c) => c.length > 0), opaque };
}

// Reading is only harmless inside the workspace: `cat ~/.aws/credentials` must be asked about.
const leavesWorkspace = (arg: string) => {
  const value = arg.startsWith("-") && arg.includes("=") ? arg.slice(arg.indexOf("=") + 1) : arg;
  return /^[~/]/.test(value) || /(^|\/)\.\.(\/|$)/.test(value) || value.startsWith("$");
};

/** True when every command of the line is known to only read, and only inside the workspace. */
export function isReadOnlyCommand(line: string): boolean {
  const parsed = split(line);
  if (!parsed || parsed.opaque || parsed.commands.length === 0) return false;
  return parsed.commands.every(([name, ...args]) => {
    if (name.includes("=") || name.includes("/")) return false; // VAR=x cmd, ./script
    if (args.some(leavesWorkspace)) return false;
    const check = Object.hasOwn(SAFE, name) ? SAFE[name] : undefined;
    return !!check && check(args);
  });
}

const INTERPRETERS = /^(sudo\s+)?(ba|z|da|k|fi)?sh$|^(python[0-9.]*|perl|ruby|node|php)$/;

function dangerousCommand([name, ...args]: Args): boolean {
  const flags = args.filter((a) => a.startsWith("-")).join(" ");
  switch (name) {
    case "rm":
      return /(^|\s)-[a-zA-Z]*[rRf]|--recursive|--force/.test(flags);
    case "sudo": case "su": case "doas": case "dd": case "shred": case "wipefs": case "fdisk": case "parted":
    case "shutdown": case "reboot": case "halt": case "poweroff": case "killall": case "pkill": case "mkswap":
      return true;
    case "chmod": case "chown": case "chgrp":
      return /(^|\s)-[a-zA-Z]*R|--recursive/.test(flags) || args.includes("/");
    case "kill":
      return args.includes("-1");
    case "git": {
      const sub = args.find((a) => !a.startsWith("-"));
      if (sub === "push") return /(^|\s)(-f|--force|--force-with-lease|--mirror|--delete)/.test(flags) || args.some((a) => a.startsWith("+") || a.startsWith(":"));
      if (sub === "reset") return args.includes("--hard");
      if (sub === "clean") return /(^|\s)-[a-zA-Z]*f|--force/.test(flags);
      if (sub === "branch") return /(^|\s)-D\b/.test(flags);
      return false;
    }
    default:
      return /^mkfs(\.|$)/.test(name);
  }
}

// Also scanned on the raw text, so commands hidden in $(...) or after a newline are caught.
const RAW_DANGER = [
  /\b(curl|wget|fetch)\b[^|;&]*\|\s*(sudo\s+)?((ba|z|da|k|fi)?sh|python[0-9.]*|perl|ruby|node|php)\b/,
  /\brm\s+(-[a-zA-Z]*\s+)*-[a-zA-Z]*[rRf]/,
  /\brm\s+.*--(recursive|force)\b/,
  /:\(\)\s*\{\s*:\|:&\s*\}\s*;\s*:/, // fork bomb
  />\s*\/dev\/(sd|nvme|hd|vd|xvd|mmcblk)/,
  /\bsudo\b/,
  /\bmkfs(\.\w+)?\b/,
];

/** True for lines that must always be asked about, whatever was approved before. */
export function isDangerousCommand(line: string): boolean {
  if (RAW_DANGER.some((re) => re.test(line))) return true;
  const parsed = split(line.replace(/[\n\r]/g, ";").replace(/`/g, " "));
  if (!parsed) return false;
  if (parsed.commands.some(dangerousCommand)) return true;
  // Something downloaded and piped straight into an interpreter.
  for (let i = 1; i < parsed.commands.length; i++) {
    const [prev] = parsed.commands[i - 1];
    if ((prev === "curl" || prev === "wget") && INTERPRETERS.test(parsed.commands[i][0])) return true;
  }
  return false;
}
