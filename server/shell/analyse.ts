// The one shell analysis: walks bash's syntax tree of a command line and lists every simple
// command it would run — across newlines, `;`, `&`, `&&`, `||`, pipes, subshells, groups,
// if/while/for/case bodies, functions, here-documents, process and command substitution — with
// wrappers unwrapped (wrappers.ts). The org policy, session approvals and the read-only
// classifier all judge this list. What it cannot see through is marked opaque, never guessed.
// One analysis per line: the answer is memoized, frozen, for every consumer of one call.
import { parseShell, type Node } from "./parser";
import type { ShellAnalysis, SimpleCommand, Word } from "./types";
import {
  assignmentProblem,
  assignmentStatement,
  declaration,
  hasDescendant,
  latentCode,
  loopProblem,
  testCommand,
} from "./statements";
import { SENSITIVE_VARIABLE, unwrap, type Context } from "./wrappers";
import { wordOf } from "./words";
import { memoized } from "./memo";

export type { ShellAnalysis, SimpleCommand, Word };

const MAX_DEPTH = 6;
// Walking costs tens of µs a node on the main thread: a line with more is not analysed.
const MAX_NODES = 2_000;

export const basename = (program: string) => program.slice(program.lastIndexOf("/") + 1);

const STDIN_REDIRECTS = new Set(["<", "<&", "<<", "<<-", "<<<", "&<"]);
const REDIRECTS = new Set(["file_redirect", "heredoc_redirect", "herestring_redirect"]);

interface Flags {
  /** stdin comes from a pipe or a redirect: an interpreter there runs what it is fed. */
  fed?: boolean;
}

class Walker {
  readonly commands: SimpleCommand[] = [];
  writes = false;
  readonly writeTargets: Word[] = [];
  readonly readTargets: Word[] = [];
  background = false;
  constructor(
    readonly source: string,
    readonly depth: number,
    readonly topLevel: boolean,
  ) {}

  opaque(node: Node, reason: string) {
    this.commands.push({ argv: [], words: [], programPath: false, assignments: [], source: node.text, opaque: reason });
  }

  visit(node: Node, flags: Flags = {}): void {
    if (node.type === "ERROR" || node.isMissing) return this.opaque(node, "bash could not parse it");
    switch (node.type) {
      case "comment":
        return;
      case "command":
        return this.command(node, flags);
      case "pipeline": {
        let first = true;
        for (const c of node.namedChildren) {
          this.visit(c, first ? flags : { fed: true });
          first = false;
        }
        return;
      }
      case "redirected_statement": {
        let fed = flags.fed;
        for (const c of node.children) if (REDIRECTS.has(c.type)) fed = this.redirect(c) || fed;
        const body = node.childForFieldName("body");
        if (body) this.visit(body, { fed });
        for (const c of node.children)
          // Not `c !== body`: each access makes a new Node object, so that would walk the body twice.
          if (!body || !c.equals(body)) c.type === "heredoc_redirect" ? this.visit(c) : this.visitChildren(c);
        return;
      }
      // Statements that are no program run: listed all the same (statements.ts).
      case "variable_assignment":
      case "variable_assignments":
        for (const p of node.type === "variable_assignments" ? node.namedChildren : [node]) this.visitChildren(p);
        this.commands.push(assignmentStatement(node));
        return;
      case "declaration_command":
      case "unset_command":
        this.visitChildren(node);
        this.commands.push(declaration(node));
        return;
      case "for_statement": {
        this.visitChildren(node);
        const problem = loopProblem(node);
        if (problem) this.opaque(node, problem);
        return;
      }
      case "test_command":
        this.visitChildren(node);
        this.commands.push(testCommand(node));
        return;
      case "command_substitution":
        // `$(< file)` reads it, `$(> file)` truncates it.
        for (const r of node.childrenForFieldName("redirect")) if (REDIRECTS.has(r.type)) this.redirect(r);
        return this.visitChildren(node);
      case "function_definition": {
        const body = node.childForFieldName("body");
        if (body) this.visit(body);
        // `cat() { echo x; } >> ~/.bashrc; cat`: the redirect applies at each call.
        for (const r of node.childrenForFieldName("redirect")) {
          if (REDIRECTS.has(r.type)) this.redirect(r);
          this.visitChildren(r);
        }
        return;
      }
      // Commands inside are listed either way (a deny of one still decides).
      case "arithmetic_expansion":
      case "c_style_for_statement":
        this.visitChildren(node);
        if (this.arithmeticReadsVariables(node))
          this.opaque(node, "arithmetic on variables can run code hidden in their values");
        return;
      case "compound_statement":
        this.visitChildren(node);
        if (node.firstChild?.type === "((" && this.arithmeticReadsVariables(node))
          this.opaque(node, "arithmetic on variables can run code hidden in their values");
        return;
      case "expansion":
        this.visitChildren(node);
        if (/^\$\{!/.test(node.text) || /@[PEAKa]?\}$/.test(node.text) || hasDescendant(node, "subscript")) {
          this.opaque(node, "this expansion can run code hidden in a variable");
        } else if (SENSITIVE_VARIABLE.test(/^\$\{(\w+):?=/.exec(node.text)?.[1] ?? "")) {
          // `${CDPATH:=/}` assigns when the variable is unset, like `CDPATH=/`.
          this.opaque(node, "this expansion sets a variable that changes what later programs run");
        } else if (node.text.includes("`")) {
          // The grammar reads `${x:-`cmd`}` as text; bash runs cmd.
          this.opaque(node, "a backquoted command inside ${…} is not followed");
        }
        return;
      case "heredoc_redirect":
        this.visitChildren(node);
        this.heredoc(node);
        return;
      case "word":
        // bash ends a bare word at an unquoted line break; the grammar sometimes reads
        // `x⏎\git push` as one command whose words are `x`, `⏎\git`, `push`.
        if (bareNewline(node.text))
          this.opaque(node, "a line break inside one word: bash would start a new command there");
        return;
      default:
        return this.visitChildren(node);
    }
  }

  visitChildren(node: Node) {
    for (const c of node.children) {
      if (c.type === "&" && !c.isNamed) this.background = true;
      this.visit(c);
    }
  }

  // Returns true when the redirect feeds stdin; notes writes to anything but /dev/null or an fd.
  redirect(node: Node): boolean {
    const op = node.children.find((c) => !c.isNamed)?.type ?? "";
    // `cat <<EOF > out`: the grammar hangs the redirects after the delimiter on the here-document.
    if (node.type === "heredoc_redirect")
      for (const r of node.childrenForFieldName("redirect")) if (REDIRECTS.has(r.type)) this.redirect(r);
    if (node.type !== "file_redirect") return true;
    const dest = node.childForFieldName("destination");
    const target = dest ? wordOf(dest) : undefined;
    if (op === "<>") {
      // Opened for reading and writing (and created): both.
      this.readTargets.push(target ?? { text: node.text, dynamic: true });
      this.writes = true;
      this.writeTargets.push(target ?? { text: node.text, dynamic: true });
      return true;
    }
    if (STDIN_REDIRECTS.has(op)) {
      const file = op === "<" || op === "&<" || (op === "<&" && !(target && /^(\d+|-)$/.test(target.text)));
      if (file) this.readTargets.push(target ?? { text: node.text, dynamic: true });
      return true;
    }
    const harmless =
      target && !target.dynamic && (target.text === "/dev/null" || (/&$/.test(op) && /^(\d+|-)$/.test(target.text)));
    if (!harmless) {
      this.writes = true;
      this.writeTargets.push(target ?? { text: node.text, dynamic: true });
    }
    return false;
  }

  // An unquoted here-document is expanded by bash, and the grammar does not follow all of it:
  // backquotes, substitutions in `<<-` bodies, and a line continuation that joins `EO\⏎F` into
  // the delimiter (the lines after it are then commands, not data).
  heredoc(node: Node) {
    const start = node.children.find((c) => c.type === "heredoc_start");
    const body = node.children.find((c) => c.type === "heredoc_body");
    if (!start || !body || /['"\\]/.test(start.text)) return;
    const text = body.text;
    // The grammar leaves a tab-indented `<<-` body unparsed; a `<<` body it does parse.
    const tabbed = node.children.some((c) => c.type === "<<-");
    const substitutions =
      /\$[([{]/.test(text) &&
      (tabbed || !hasDescendant(body, "command_substitution", "expansion", "arithmetic_expansion"));
    if (/`|\\\r?\n/.test(text) || substitutions)
      this.opaque(node, "an unquoted here-document runs what it expands, and not all of it is followed");
  }

  command(node: Node, flags: Flags) {
    const assignments: string[] = [];
    const words: Word[] = [];
    let fed = flags.fed;
    const ranges: { start: number; end: number }[] = [];
    let opaque: string | undefined;
    let prevEnd = -1;
    for (const c of node.children) {
      // bash joins `gi\⏎t` into one word; the grammar makes two. Join them again, or give up.
      const glued = prevEnd >= 0 && /^\\\r?\n$/.test(this.source.slice(prevEnd, c.startIndex));
      prevEnd = c.endIndex;
      if (glued) {
        if (words.length === 0 || !(c.type === "word" || c.type === "number") || REDIRECTS.has(c.type)) {
          opaque ??= "a line continuation inside a word";
          continue;
        }
        const last = words.length - 1;
        const w = wordOf(c);
        words[last] = { text: words[last].text + w.text, dynamic: words[last].dynamic || w.dynamic };
        if (ranges[last]) ranges[last] = { start: ranges[last].start, end: c.endIndex };
        continue;
      }
      if (c.type === "variable_assignment") {
        const problem = assignmentProblem(c);
        if (problem) opaque ??= problem;
        assignments.push(c.text);
      } else if (c.type === "command_name") {
        const inner = c.firstNamedChild ?? c;
        const w = wordOf(inner);
        if (w.dynamic) opaque ??= "the program is only known at run time";
        words.push(w);
        ranges.push({ start: c.startIndex, end: c.endIndex });
      } else if (REDIRECTS.has(c.type)) {
        fed = this.redirect(c) || fed;
      } else if (c.isNamed && c.type !== "comment") {
        words.push(wordOf(c));
        ranges.push({ start: c.startIndex, end: c.endIndex });
      }
    }
    for (const c of node.children) {
      if (c.type === "variable_assignment") this.visitChildren(c);
      else this.visit(c);
    }
    for (const w of words)
      if (!w.dynamic && latentCode(w.text))
        opaque ??= "a quoted `$(…)` inside a subscript runs where bash evaluates it";
    const argv = words.map((w, i) => (i === 0 && !w.dynamic ? basename(w.text) : w.text));
    const base: SimpleCommand = {
      argv,
      words,
      assignments,
      source: node.text,
      programPath: !!words[0] && !words[0].dynamic && words[0].text.includes("/"),
      ...(opaque ? { opaque } : {}),
      ...(this.topLevel ? { ranges } : {}),
    };
    this.commands.push(...unwrap(base, this.context(fed)));
  }

  context(fed: boolean | undefined): Context {
    return { fed: !!fed, depth: this.depth, analyse: (text) => analyseAt(text, this.depth + 1, false) };
  }

  arithmeticReadsVariables(node: Node): boolean {
    return hasDescendant(node, "variable_name", "simple_expansion", "expansion", "subscript", "command_substitution");
  }
}

// A line break in a bare word's text that no backslash escapes.
function bareNewline(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    if (text[i] === "\\") i++;
    else if (text[i] === "\n") return true;
  }
  return false;
}

function analyseAt(line: string, depth: number, topLevel: boolean): ShellAnalysis {
  const source = (s: string): ShellAnalysis => ({
    commands: [{ argv: [], words: [], programPath: false, assignments: [], source: line, opaque: s }],
    writes: false,
    writeTargets: [],
    readTargets: [],
    background: false,
  });
  if (depth > MAX_DEPTH) return source("commands are nested too deeply to follow");
  const tree = parseShell(line);
  if (!tree) return source("the command line is too long to analyse");
  try {
    if (tree.rootNode.descendantCount > MAX_NODES) return source("the command line is too long to analyse");
    const w = new Walker(line, depth, topLevel);
    w.visit(tree.rootNode);
    // Some errors hide inside nodes the walk reads as words.
    if (tree.rootNode.hasError && !w.commands.some((c) => c.opaque)) w.opaque(tree.rootNode, "bash could not parse it");
    return {
      commands: w.commands,
      writes: w.writes,
      writeTargets: w.writeTargets,
      readTargets: w.readTargets,
      background: w.background,
    };
  } finally {
    tree.delete();
  }
}

/** Every simple command `line` would run, memoized (memo.ts): a call is judged by several
 *  consumers, and each asks with the same line. The answer is frozen, shared by every caller. */
export function analyseShell(line: string): ShellAnalysis {
  return memoized(line, (l) => analyseAt(l, 0, true));
}

/** True when some command of the analysis could not be seen through. */
export function isOpaque(a: ShellAnalysis): boolean {
  return a.commands.some((c) => c.opaque !== undefined);
}
