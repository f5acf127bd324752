// Judges a shell command line for the shell tool's approval, over the shared shell analysis
// (server/shell/analyse.ts): which lines are plainly read-only (every simple command on a
// known-safe list with static words, nothing the analysis could not see through, no writes
// through redirection, nothing outside the workspace). Which lines are dangerous enough to be
// asked about every time is the analysis's to say (server/shell/danger.ts), since the session
// approvals judge it too. Anything not recognised is neither: it gets the default (ask).
import { analyseShell, type SimpleCommand } from "../../shell/analyse";
import { gitIsReadOnly } from "./shell-git";

type Args = readonly string[];
const any = () => true;
const noArgs = (a: Args) => a.length === 0;
// A one-letter option also hides in a cluster (`sort -no out` is -n -o out) or glued to its value (-oout).
const hasOption = (x: string, b: string) =>
  /^-[a-zA-Z]$/.test(b)
    ? new RegExp(`^-[a-zA-Z]*${b[1]}`).test(x) && !x.startsWith("--")
    : x === b || (b.startsWith("--") && x.startsWith(`${b}=`));
const without =
  (...bad: string[]) =>
  (a: Args) =>
    !a.some((x) => bad.some((b) => hasOption(x, b)));

// `sed -n '12,40p' file` is how models read a slice; anything else sed can do may write.
const sedPrints = (a: Args) =>
  a.includes("-n") &&
  !a.some((x) => /^(-i|--in-place)/.test(x) || x === "-e" || x === "-f") &&
  a
    .filter((x) => !x.startsWith("-"))
    .slice(0, 1)
    .every((s) => /^\s*(\d+|\$)(\s*,\s*(\d+|\$))?\s*p\s*$/.test(s));

const SAFE: Record<string, (a: Args) => boolean> = {
  ls: any,
  pwd: any,
  cat: any,
  head: any,
  tail: any,
  wc: any,
  echo: any,
  printf: any,
  which: any,
  file: without("-C", "--compile"),
  stat: any,
  du: any,
  df: any,
  basename: any,
  dirname: any,
  realpath: any,
  readlink: any,
  whoami: any,
  id: any,
  uname: any,
  true: any,
  false: any,
  nl: any,
  tac: any,
  cut: any,
  diff: any,
  cmp: any,
  comm: any,
  grep: any,
  egrep: any,
  fgrep: any,
  jq: any,
  printenv: any,
  seq: any,
  test: any,
  "[": any,
  md5sum: any,
  sha1sum: any,
  sha256sum: any,
  strings: any,
  hexdump: any,
  cd: any,
  type: any,
  tr: any,
  column: any,
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

// Reading is only harmless inside the workspace: `cat ~/.aws/credentials` must be asked about.
const leavesWorkspace = (arg: string) => {
  const value = arg.startsWith("-") && arg.includes("=") ? arg.slice(arg.indexOf("=") + 1) : arg;
  return /^[~/]/.test(value) || /(^|\/)\.\.(\/|$)/.test(value) || value.startsWith("$");
};

// Readers none of whose options writes or runs anything, so a glob that expands to a file
// named like an option (`-o…`, `--pre=…`) cannot turn them into something else.
const GLOB_READERS = new Set([
  "ls",
  "cat",
  "head",
  "tail",
  "wc",
  "nl",
  "grep",
  "egrep",
  "fgrep",
  "stat",
  "du",
  "md5sum",
  "sha1sum",
  "sha256sum",
]);

function readOnly(c: SimpleCommand): boolean {
  if (c.opaque || c.wrappedBy || c.assignments.length > 0 || c.programPath || c.argv.length === 0) return false;
  const [name, ...args] = c.argv;
  if (name === "[" || name === "[[") return true; // opaque forms (-v, arithmetic) were excluded above
  const dynamic = c.words.slice(1).filter((w) => w.dynamic);
  if (dynamic.some((w) => !w.globOnly) || (dynamic.length > 0 && !GLOB_READERS.has(name))) return false;
  if (args.some(leavesWorkspace)) return false;
  const check = Object.hasOwn(SAFE, name) ? SAFE[name] : undefined;
  return !!check && check(args);
}

/** True when every command of the line is known to only read, and only inside the workspace. */
export function isReadOnlyCommand(line: string): boolean {
  const a = analyseShell(line);
  // `< file` reads too: only inside the workspace (`cat < /etc/shadow` asks).
  const inputs = a.readTargets.every((t) => !t.dynamic && !leavesWorkspace(t.text));
  return !a.writes && !a.background && inputs && a.commands.length > 0 && a.commands.every(readOnly);
}
