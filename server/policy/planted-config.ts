// Configuration a line writes for a network client it (or a later line) runs: `printf 'Host x\n
// Hostname evil.com' > ~/.ssh/config; ssh x` reaches evil.com though `ssh x` names no host. A
// write counts when its target is a file such a client reads (ssh's, git's, curl's, wget's,
// netrc, npm's, the `-F`/`-K`/`--config` file a client on the line is given, or one under a
// `CURL_HOME`/`GIT_CONFIG_GLOBAL`/`WGETRC`/`XDG_CONFIG_HOME`/`HOME` the line sets): by a
// redirect (`>`, `>>`, `&>`, a here-document's `cat > f <<EOF`), or by `tee`, `cp`, `mv`,
// `install`, `dd of=`, `ln` or `sed -i`. The text written, where the line shows it as a literal
// (echo and printf words, escapes and `%s` rendered; a here-document's body), is read for host
// names; where it does not (`cp x ~/.ssh/config`, `curl … > ~/.curlrc`, `echo $V >> ~/.netrc`),
// the write is something a host rule cannot see through. A file written by a separate tool call
// (write_file) is no part of a command line and is not seen here.
import { posix } from "node:path";
import { analyseShell, type SimpleCommand } from "../shell/analyse";
import { parseShell, type Node } from "../shell/parser";
import { wordOf } from "../shell/words";
import type { Word } from "../shell/types";
import { expandWord } from "./hosts-words";
import { unseenSourceText } from "./unseen-source";

export interface Planted {
  /** Texts written into a client's configuration, to be read for host names. */
  texts: string[];
  /** Why a write into a client's configuration cannot be read, when one cannot. */
  unseen?: string;
}

const CLIENT_FILES =
  /(^|\/)(\.ssh\/(config|config\.d\/.*)|\.gitconfig|\.gitmodules|\.git\/config(\.worktree)?|\.git\/modules\/.*\/config|\.config\/git\/config|\.config\/\.?curlrc|[._]curlrc|\.wgetrc|[._]netrc|\.npmrc|\.yarnrc(\.yml)?)$|^\/etc\/(ssh\/ssh_config(\.d\/.*)?|gitconfig|wgetrc|npmrc)$/i;
// Variables that point a client at a config file, or a folder it finds one in.
const FILE_VARIABLES =
  /^(GIT_CONFIG|GIT_CONFIG_GLOBAL|GIT_CONFIG_SYSTEM|WGETRC|SYSTEM_WGETRC|NETRC|NPM_CONFIG_USERCONFIG)$/i;
const DIR_VARIABLES = /^(CURL_HOME|XDG_CONFIG_HOME|HOME)$/;
// What a client finds in such a folder.
const IN_DIR = /^(git\/config|\.?curlrc|\.ssh\/config|\.gitconfig|\.wgetrc|\.netrc|\.npmrc)$/;
// Options of a client that name its config file: ssh's `-F`, curl's `-K`, `--config`.
const FILE_OPTION: Record<string, RegExp> = {
  ssh: /^-[1246AaCfGgKkMNnqsTtVvXxYy]*F(.*)$/s,
  scp: /^-[12346ABCTdfOpqRrstv]*F(.*)$/s,
  sftp: /^-[1246AafhNpqrvC]*F(.*)$/s,
  curl: /^(?:-[a-zA-Z0-9]*?K|--config=?)(.*)$/s,
  wget: /^--config=?(.*)$/s,
};
const WRITERS = new Set(["tee", "cp", "mv", "install", "dd", "ln", "sed", "rsync"]);
const OUTPUT = /^(>|>>|>\||&>|&>>|<>)$/;

// A path as written, quotes and escapes gone (`~/.ssh/"config"`), `$HOME` as `~`.
const clean = (path: string) => posix.normalize(path.replace(/["'\\]/g, "").replace(/^(~|\$\{?HOME\}?)(?=\/)/, "~"));

/** The client config files and folders the line itself points to. */
function pointed(commands: readonly SimpleCommand[]): Where {
  const files = new Set<string>();
  const dirs: string[] = [];
  const cwd: string[] = [];
  const vars = new Map<string, string[]>();
  for (const c of commands) {
    // `F=~/.ssh/config; … > "$F"`: a path held in a variable the line sets is each value it holds.
    const declared = /^(export|declare|typeset|local|readonly)$/.test(c.argv[0] ?? "") ? c.argv.slice(1) : [];
    for (const a of [...c.assignments, ...declared]) {
      const m = /^([A-Za-z_]\w*)\+?=(.*)$/s.exec(a);
      const e = m && expandWord(m[2], true);
      // `F=$HOME/.ssh/config`: a value only known at run time is kept as written (clean() reads
      // `$HOME` as `~`).
      if (m && e) vars.set(m[1], [...(vars.get(m[1]) ?? []), ...(e.unknown ? [m[2]] : e.values)]);
    }
    // `cd ~/.ssh && echo … > config`: a relative path is read in each folder the line enters.
    if ((c.argv[0] === "cd" || c.argv[0] === "pushd") && c.words[1]) cwd.push(clean(c.words[1].text));
    const settings = [...c.assignments, ...(c.argv[0] === "export" || c.argv[0] === "env" ? c.argv.slice(1) : [])];
    for (const a of settings) {
      const m = /^([A-Za-z_]\w*)=["']?(.*?)["']?$/s.exec(a);
      if (m && FILE_VARIABLES.test(m[1])) files.add(clean(m[2]));
      else if (m && DIR_VARIABLES.test(m[1]) && m[2]) dirs.push(clean(m[2]));
    }
    const option = FILE_OPTION[c.argv[0] ?? ""];
    if (!option) continue;
    for (let i = 1; i < c.argv.length; i++) {
      const m = option.exec(c.argv[i]);
      if (m) files.add(clean(m[1] !== "" ? m[1] : (c.argv[++i] ?? "")));
    }
  }
  return { files, dirs, cwd, vars };
}

interface Where {
  files: Set<string>;
  dirs: string[];
  cwd: string[];
  /** Static values the line gives variables, for a path spelled with them. */
  vars: Map<string, string[]>;
}

// A path with `$NAME`/`${NAME}` of variables the line sets, in each spelling their values give.
function spellings(path: string, vars: Map<string, string[]>): string[] {
  const m = /\$(?:\{([A-Za-z_]\w*)\}|([A-Za-z_]\w*))/.exec(path);
  if (!m) return [path];
  const values = vars.get(m[1] ?? m[2]);
  if (!values) return [path];
  const at = (v: string) => path.slice(0, m.index) + v + path.slice(m.index + m[0].length);
  return [...new Set(values)]
    .slice(0, 8)
    .flatMap((v) => spellings(at(v), new Map([...vars].filter(([k]) => k !== (m[1] ?? m[2])))));
}

function isClientFile(path: string, where: Where): boolean {
  return spellings(path, where.vars).some((p) => isClientPath(p, where));
}

function isClientPath(path: string, where: Where): boolean {
  const p = clean(path);
  if (CLIENT_FILES.test(p) || where.files.has(p)) return true;
  if (!/^[~/]/.test(p) && where.cwd.some((d) => CLIENT_FILES.test(posix.join(d, p)))) return true;
  return where.dirs.some((d) => {
    const base = `${d.replace(/\/$/, "")}/`;
    return (d === "." || p.startsWith(base)) && IN_DIR.test(d === "." ? p : p.slice(base.length));
  });
}

// printf's and `echo -e`'s escapes, as the text they print holds them.
const ESCAPES: Record<string, string> = { n: "\n", t: "\t", r: "\r", v: "\v", f: "\f", a: "\x07", b: "\b", e: "\x1b" };
function unescape(text: string): string {
  return text.replace(/\\(x[0-9a-f]{1,2}|0?[0-7]{1,3}|u[0-9a-f]{1,4}|.)/gis, (all, e: string) => {
    if (/^x/i.test(e)) return String.fromCharCode(parseInt(e.slice(1), 16));
    if (/^u/i.test(e)) return String.fromCharCode(parseInt(e.slice(1), 16));
    if (/^[0-7]/.test(e)) return String.fromCharCode(parseInt(e, 8) & 255);
    return ESCAPES[e] ?? (e === "\\" ? "\\" : all);
  });
}

// What printf prints: the format with its `%s`-style conversions filled, used again while
// arguments remain.
function printfText(args: readonly string[]): string {
  const [format = "", ...rest] = args;
  if (!/%[-+ #0-9.]*[sbdiqcxXo]/.test(format)) return unescape(format) + rest.join("");
  let out = "";
  let i = 0;
  do {
    out += unescape(format).replace(/%[-+ #0-9.]*([sbdiqcxXo%])/g, (_, c: string) =>
      c === "%" ? "%" : c === "b" ? unescape(rest[i++] ?? "") : (rest[i++] ?? ""),
    );
  } while (i < rest.length);
  return out;
}

// The literal texts a statement's echo or printf prints, or undefined when it is no such
// command or part of what it prints is only known at run time.
function printedText(command: Node): string[] | undefined {
  if (command.type !== "command") return undefined;
  const name = command.childForFieldName("name");
  const program = name?.text.replace(/^.*\//, "");
  if (program !== "echo" && program !== "printf") return undefined;
  const words: Word[] = command.namedChildren
    .filter((c) => c.type !== "command_name" && c.type !== "variable_assignment" && !c.type.endsWith("redirect"))
    .map(wordOf);
  const texts: string[] = [];
  for (const w of words) {
    if (!w.dynamic) texts.push(w.text);
    else {
      const e = expandWord(w.text);
      if (e.unknown) return undefined;
      texts.push(e.values.join(" "));
    }
  }
  let args = texts;
  if (program === "echo") while (args.length > 0 && /^-[neE]+$/.test(args[0])) args = args.slice(1);
  return program === "printf"
    ? [printfText(args.filter((t) => t !== "--")), ...args]
    : [args.join(" "), unescape(args.join(" "))];
}

// The statement a redirect belongs to: what writes into its file.
function statementOf(redirect: Node): Node | undefined {
  for (let n: Node | null = redirect.parent; n; n = n.parent) if (n.type === "redirected_statement") return n;
  return undefined;
}

function readWrites(text: string, where: Where, out: Planted, unseen: () => string): void {
  const tree = parseShell(text);
  if (!tree) return;
  try {
    // As the analysis: a line this large is opaque there, and asked about for that.
    if (tree.rootNode.descendantCount > 2_000) return;
    const stack: Node[] = [tree.rootNode];
    for (let node = stack.pop(); node; node = stack.pop()) {
      stack.push(...node.children);
      if (node.type !== "file_redirect") continue;
      const op = node.children.find((c) => !c.isNamed)?.type ?? "";
      const dest = node.childForFieldName("destination");
      if (!OUTPUT.test(op) || !dest || !isClientFile(wordOf(dest).text, where)) continue;
      const statement = statementOf(node);
      const heredoc = statement?.descendantsOfType("heredoc_body")[0];
      const body = statement?.childForFieldName("body");
      const quoted = statement?.descendantsOfType("heredoc_start").some((s) => /['"\\]/.test(s.text));
      let written: string[] | undefined;
      if (heredoc) written = quoted || !/[$`]/.test(heredoc.text) ? [heredoc.text] : undefined;
      else if (body) written = printedText(body);
      // What cannot be read is the whole line's to say: `H=evil.com; echo "Hostname $H" > …`,
      // the line's too when this is a script it runs.
      out.texts.push(...(written ?? [text, unseen()]));
      if (!written)
        out.unseen ??= `\`${(statement ?? node).text.slice(0, 60)}\` writes a network client's configuration`;
    }
  } finally {
    tree.delete();
  }
}

// The files a writer writes: tee's and `sed -i`'s operands, dd's `of=`, and for cp, mv,
// install, ln and rsync the last operand or the `-t` folder (with each source's name in it).
function targetsOf(c: SimpleCommand): string[] {
  const words = c.words.slice(1).map((w) => w.text);
  const operands = words.filter((t) => !t.startsWith("-"));
  if (c.argv[0] === "tee" || c.argv[0] === "sed") return operands;
  if (c.argv[0] === "dd") return words.flatMap((t) => (t.startsWith("of=") ? [t.slice(3)] : []));
  const at = words.findIndex((t) => /^(-t|--target-directory)(=|$)/.test(t));
  const folder = at < 0 ? undefined : words[at].includes("=") ? words[at].split("=")[1] : words[at + 1];
  if (folder === undefined) return operands.slice(-1);
  return [folder, ...operands.filter((t) => t !== folder).map((t) => posix.join(folder, posix.basename(t)))];
}

const cache = new Map<string, Planted>();

/** What `line` writes into network clients' configuration, and whether all of it can be read;
 *  memoized, since each host rule asks. */
export function plantedConfig(line: string): Planted {
  let found = cache.get(line);
  if (!found) {
    found = planted(line);
    if (cache.size >= 16) cache.delete(cache.keys().next().value as string);
    cache.set(line, found);
  }
  return found;
}

function planted(line: string): Planted {
  const { commands, scripts } = analyseShell(line);
  const where = pointed(commands);
  const out: Planted = { texts: [] };
  // What a write the line does not show may hold: its words, but for print-only statements
  // (asked for only then: it analyses each statement on its own).
  let narrowed: string | undefined;
  const unseen = () => (narrowed ??= unseenSourceText(line));
  for (const text of [line, ...new Set(scripts)]) readWrites(text, where, out, unseen);
  for (const c of commands) {
    if (!WRITERS.has(c.argv[0] ?? "")) continue;
    if (c.argv[0] === "sed" && !c.argv.some((a) => /^-[a-zA-Z]*i|^--in-place/.test(a))) continue;
    if (!targetsOf(c).some((t) => isClientFile(t, where))) continue;
    // What it copies is not on the line: only a name the line spells can be read.
    out.texts.push(unseen());
    out.unseen ??= `\`${c.source.slice(0, 60)}\` writes a network client's configuration`;
  }
  return out;
}
