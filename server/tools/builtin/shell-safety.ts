// Judges a shell command line for the shell tool's approval, over the shared shell analysis
// (server/shell/analyse.ts): which lines are plainly read-only (every simple command on a
// known-safe list with static words, nothing the analysis could not see through, no writes
// through redirection, nothing outside the workspace). Which lines are dangerous enough to be
// asked about every time is the analysis's to say (server/shell/danger.ts), since the session
// approvals judge it too. Anything not recognised is neither: it gets the default (ask).
import { analyseShell, type SimpleCommand } from "../../shell/analyse";
import { abbreviates, gitIsReadOnly } from "./shell-git";

type Args = readonly string[];
const any = () => true;
const noArgs = (a: Args) => a.length === 0;
// A one-letter option also hides in a cluster (`sort -no out` is -n -o out, `file -0C` is
// --print0 -C) or glued to its value (-oout); a long one in any prefix GNU accepts for it
// (`sort --out=f`). A cluster's letter may follow digits and signs, which only asks more.
const hasOption = (x: string, b: string) =>
  /^-[a-zA-Z]$/.test(b) ? new RegExp(`^-[^=]*${b[1]}`).test(x) && !x.startsWith("--") : x === b || abbreviates(x, b);
const without =
  (...bad: string[]) =>
  (a: Args) =>
    !a.some((x) => bad.some((b) => hasOption(x, b)));

// Operands: what is not an option, `-` (stdin) and everything after `--`. GNU tools take options
// after operands too, so an option anywhere counts as one.
const operands = (a: Args) => {
  const end = a.indexOf("--");
  const before = end < 0 ? a : a.slice(0, end);
  return [...before.filter((x) => x === "-" || !x.startsWith("-")), ...(end < 0 ? [] : a.slice(end + 1))];
};
const options = (a: Args) => {
  const end = a.indexOf("--");
  return (end < 0 ? a : a.slice(0, end)).filter((x) => x !== "-" && x.startsWith("-"));
};

// `sed -n '12,40p' file` is how models read a slice; anything else sed can do may write or run
// (`w`, `e`, `-i`, a script from `-e…`/`--expression=…`/`--file=…`): only these options, named
// in full, and the first operand is the script.
const SED_LONG = new Set(["--quiet", "--silent", "--regexp-extended", "--separate", "--null-data", "--posix"]);
const sedPrints = (a: Args) => {
  const opts = options(a);
  return (
    opts.every((x) => /^-[nEsrz]+$/.test(x) || SED_LONG.has(x)) &&
    opts.some((x) => /^-[a-zA-Z]*n/.test(x) || x === "--quiet" || x === "--silent") &&
    /^\s*(\d+|\$)(\s*,\s*(\d+|\$))?\s*p\s*$/.test(operands(a)[0] ?? "")
  );
};

// `test -v 'a[x]'` evaluates the subscript as arithmetic, which runs `b[$(cmd)]` held in x.
const namesOnly = (a: Args) => a.every((x, i) => !["-v", "-R"].includes(a[i - 1] ?? "") || /^\w+$/.test(x));

// `date MMDDhhmm` and `date -s` set the clock; only `+FORMAT` operands print. -d, -f and -r take a value.
const dateReads = (a: Args) => {
  if (a.some((x) => hasOption(x, "-s") || hasOption(x, "--set"))) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i];
    if (x === "--") return a.slice(i + 1).every((o) => o.startsWith("+"));
    if (
      /^-[a-zA-Z]*[dfr]$/.test(x) ||
      (!x.includes("=") && ["--date", "--file", "--reference"].some((l) => abbreviates(x, l)))
    )
      i++;
    else if (!x.startsWith("-") && !x.startsWith("+")) return false;
  }
  return true;
};

// `cd` alone goes to $HOME and `cd -` to $OLDPWD, both outside the workspace.
const cdInside = (a: Args) => {
  const ops = operands(a);
  return options(a).every((x) => x === "-P" || x === "-L") && ops.length === 1 && ops[0] !== "-";
};

const SAFE: Record<string, (a: Args) => boolean> = {
  ls: any,
  pwd: any,
  cat: any,
  head: any,
  tail: any,
  // --files0-from reads the names of what to read from a file: any file on the machine.
  wc: without("--files0-from"),
  echo: any,
  // `printf -v PATH .` sets a variable the rest of the line runs with.
  printf: (a) => a[0] === "--" || !a[0]?.startsWith("-"),
  which: any,
  file: without("-C", "--compile"),
  stat: any,
  du: without("--files0-from"),
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
  // A module's search path may name any folder: `import "x" as $x {search: "/"}` reads x.json.
  jq: (a) => !a.some((x) => /\b(import|include|modulemeta|get_search_list)\b/.test(x)),
  printenv: any,
  seq: any,
  test: namesOnly,
  "[": namesOnly,
  md5sum: any,
  sha1sum: any,
  sha256sum: any,
  // binutils read `@file` as more arguments, echoing each word of any file in their errors.
  strings: (a) => !a.some((x) => x.startsWith("@")),
  hexdump: any,
  cd: cdInside,
  type: any,
  tr: any,
  column: any,
  // -R with -H writes 00Tree.html into every folder.
  tree: without("-o", "--output", "-R"),
  date: dateReads,
  hostname: noArgs,
  env: noArgs,
  uniq: (a) => operands(a).length <= 1, // a second operand is the output file (`uniq - out`)
  sort: without("-o", "--output", "--compress-program", "--files0-from"),
  // ripgrep 14 runs --hostname-bin for hyperlinks; -z runs the decompressors found on PATH.
  rg: without("--pre", "--hostname-bin", "-z", "--search-zip"),
  find: without("-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"),
  sed: sedPrints,
  git: gitIsReadOnly,
};

// Reading is only harmless inside the workspace: `cat ~/.aws/credentials` must be asked about.
// A value glued to a short option counts too (`grep -f/etc/shadow`, `jq -L/`), but not the
// delimiter of `cut -d/` or `sort -t/`.
const leavesWorkspace = (arg: string) => {
  const value = arg.startsWith("-") && arg.includes("=") ? arg.slice(arg.indexOf("=") + 1) : arg;
  const glued = arg === "-d/" || arg === "-t/" ? "" : (/^-[a-zA-Z]+(.+)$/.exec(arg)?.[1] ?? "");
  return [value, glued].some((v) => /^[~/]/.test(v) || /(^|\/)\.\.(\/|$)/.test(v)) || value.startsWith("$");
};
// Before bash 5.2 (globskipdots) a pattern that starts a name with a dot matches `..` too:
// `cat .*/secret` reads ../secret. A segment starting with `.` or `[` that globs is refused.
const globClimbs = (source: string) =>
  source
    .replace(/['"\\]/g, "")
    .split("/")
    .some((seg) => /^[.[]/.test(seg) && /[*?[]/.test(seg));

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
  if (dynamic.some((w) => globClimbs(w.text))) return false;
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
