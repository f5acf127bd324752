// The walk behind the shell analysis (analyse.ts): visits bash's syntax tree of one line or
// script and lists each simple command it runs, with the stdin it reads where the line shows it
// (stdin.ts), its redirects (redirects.ts) and what wrappers run (wrappers.ts).
import type { Node } from "./parser";
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
import { nodeSettings, variableCode } from "./client-code";
import { wordOf } from "./words";
import * as input from "./stdin";
import type { Stdin } from "./stdin";
import { bareNewline, heredoc, redirect, REDIRECTS, stdinOf } from "./redirects";
import { programReadings, substitutedScript, valuesOf } from "./program-values";
import { fileKey, filled, inputFile, inputSubstitution, recordWrites, STARTUP_FILES } from "./line-feeds";
import { inner } from "./runners";

export const basename = (program: string) => program.slice(program.lastIndexOf("/") + 1);

interface Flags {
  /** stdin comes from a pipe or a redirect: an interpreter there runs what it is fed. */
  fed?: boolean;
  /** What that stdin holds, when the line shows it (stdin.ts). */
  stdin?: Stdin;
}

// What a script inherits from the line that runs it: its stdin, and whether names are shadowed.
export type Inherit = Flags & { shadowed?: boolean };

// Statements that take what they read as flags; any other reads what its enclosing one reads.
const HANDED = new Set(["command", "pipeline", "redirected_statement"]);

// Statements whose standard output a pipe after them gets, as `printed` (stdin.ts) tells it.
const PRINTING = new Set(["command", "pipeline", "redirected_statement", "compound_statement", "subshell"]);

export class Walker {
  readonly commands: SimpleCommand[] = [];
  writes = false;
  readonly writeTargets: Word[] = [];
  readonly readTargets: Word[] = [];
  background = false;
  /** Scripts handed to a shell, nested ones too (ShellAnalysis.scripts). */
  readonly scripts: string[] = [];
  /** What the statement visited last prints to a pipe, when the line shows it. */
  output: Stdin | undefined;
  /** The stdin of the group, loop or subshell being walked, which its commands share. */
  inherited: Flags = {};
  /** `cat` or `echo` may be a function here (stdin.ts, shadows): what they print is unsure. */
  shadowed = false;
  /** An `exec` redirects the shell's stdin (stdin.ts, replacesStdin): what it shares is unknown. */
  replaced = false;
  /** What each substitution prints, and the static values of variables (program-values.ts). */
  readonly printed = new Map<number, Stdin | undefined>();
  readonly values = new Map<string, string[]>();
  /** What each function the line defines prints, and the files it writes with text it shows. */
  readonly functions = new Map<string, Stdin | undefined>();
  readonly files = new Map<string, Stdin>();
  constructor(
    readonly source: string,
    readonly depth: number,
    readonly topLevel: boolean,
    /** Analyses a script the line hands a shell, one level deeper (analyse.ts). */
    readonly nested: (text: string, depth: number, inherit: Inherit) => ShellAnalysis,
  ) {}

  opaque(node: Node, reason: string) {
    this.commands.push({ argv: [], words: [], programPath: false, assignments: [], source: node.text, opaque: reason });
  }

  visit(node: Node, flags?: Flags): void {
    this.output = undefined;
    if (node.type === "ERROR" || node.isMissing) return this.opaque(node, "bash could not parse it");
    if (flags && !HANDED.has(node.type)) {
      // `( … ) | sh`, `{ bash; } <<EOF`: the commands inside read what the group reads.
      const outer = this.inherited;
      this.inherited = flags;
      this.visit(node);
      this.inherited = outer;
      return;
    }
    switch (node.type) {
      case "comment":
        return;
      case "command":
        return this.command(node, flags ?? this.shared());
      case "pipeline":
        return this.pipeline(node, flags ?? this.shared());
      case "redirected_statement":
        return this.redirected(node, flags ?? this.shared());
      // Statements that are no program run: listed all the same (statements.ts).
      case "variable_assignment":
      case "variable_assignments":
        for (const p of node.type === "variable_assignments" ? node.namedChildren : [node]) this.visitChildren(p);
        this.commands.push(assignmentStatement(node));
        return this.variables(node.type === "variable_assignments" ? node.namedChildren : [node]);
      case "declaration_command":
      case "unset_command":
        this.visitChildren(node);
        this.commands.push(declaration(node));
        return this.variables(node.namedChildren);
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
        for (const r of node.childrenForFieldName("redirect")) if (REDIRECTS.has(r.type)) redirect(this, r);
        this.printed.set(node.startIndex, this.sequence(node));
        return;
      case "process_substitution":
        this.printed.set(node.startIndex, this.sequence(node));
        return;
      case "function_definition": {
        const body = node.childForFieldName("body");
        if (body) this.visit(body);
        const name = node.childForFieldName("name")?.text;
        // `f(){ echo rm; }; $(f) -rf /`: a call prints what the body does, as a reading.
        if (name) this.functions.set(name, body && PRINTING.has(body.type) ? this.output : undefined);
        // `cat() { echo x; } >> ~/.bashrc; cat`: the redirect applies at each call.
        for (const r of node.childrenForFieldName("redirect")) {
          if (REDIRECTS.has(r.type)) redirect(this, r);
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
        if (node.firstChild?.type === "((") {
          this.visitChildren(node);
          if (this.arithmeticReadsVariables(node))
            this.opaque(node, "arithmetic on variables can run code hidden in their values");
        } else this.output = this.sequence(node);
        return;
      case "subshell":
        this.output = this.sequence(node);
        return;
      case "expansion":
        this.visitChildren(node);
        // bash joins a line continuation before it reads the operator (`${x@\⏎P}` is `${x@P}`).
        if (/\\\r?\n/.test(node.text)) this.opaque(node, "a line continuation inside ${…} is not followed");
        else if (/^\$\{!/.test(node.text) || /@[PEAKa]?\}$/.test(node.text) || hasDescendant(node, "subscript")) {
          this.opaque(node, "this expansion can run code hidden in a variable");
        } else if (SENSITIVE_VARIABLE.test(/^\$\{(\w+):?=/.exec(node.text)?.[1] ?? "")) {
          // `${CDPATH:=/}` assigns when the variable is unset, like `CDPATH=/`.
          this.opaque(node, "this expansion sets a variable that changes what later programs run");
        } else if (node.text.includes("`")) {
          // The grammar reads `${x:-`cmd`}` as text; bash runs cmd.
          this.opaque(node, "a backquoted command inside ${…} is not followed");
        } else if (substringOfVariables(node)) {
          // `${PWD:x}`: the offset and length are arithmetic, which runs `a[$(cmd)]` held in x.
          this.opaque(node, "a substring's offset is arithmetic, which can run code hidden in a variable");
        }
        return;
      case "regex":
        // The grammar keeps a `${v#pattern}` or `=~` operand as text, `$(cmd)` in it too; bash
        // expands the pattern and runs cmd. So is a nested `${x@P}`, `${PWD:x}`, `${!x}`, which
        // the expansion checks below never see; and bash joins a line continuation first.
        if (/\$[([{]|[<>]\(|`/.test(node.text.replace(/\\\r?\n/g, "")))
          this.opaque(node, "a command or expansion inside a pattern that the grammar reads as text is not followed");
        return;
      case "heredoc_redirect":
        this.heredocRedirect(node, undefined);
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

  // The stdin the commands of the group or script being walked share.
  shared(): Flags {
    return this.replaced ? { fed: true } : this.inherited;
  }

  // `{ …; }`, `( … )`: what its statements print, one after the other, when each is known.
  sequence(node: Node): Stdin | undefined {
    let text = "";
    let exact = true;
    let known = true;
    for (const c of node.children) {
      if (c.type === "&" && !c.isNamed) {
        this.background = true;
        known = false;
      }
      this.visit(c);
      // An assignment prints nothing: `$(H=x; echo $H)` prints what echo does.
      if (!c.isNamed || c.type === "comment" || c.type === "variable_assignment") continue;
      const out = PRINTING.has(c.type) ? this.output : undefined;
      if (!out) known = false;
      else {
        text += out.text;
        exact &&= out.exact;
      }
    }
    return known ? { text, exact } : undefined;
  }

  // Each part reads what the one before prints; `last` is the stdin a redirect gives the last
  // part (`x | cat <<EOF`: the grammar hangs the here-document on the whole pipeline).
  pipeline(node: Node, first: Flags, last?: Flags, extra: Node[] = []) {
    const parts = node.namedChildren.filter((c) => c.type !== "comment");
    let input = first;
    let out: Stdin | undefined;
    parts.forEach((c, i) => {
      const end = i === parts.length - 1;
      if (end && extra.length > 0) this.words(c, last ?? input, extra);
      else this.visit(c, end && last ? last : input);
      out = PRINTING.has(c.type) ? this.output : undefined;
      input = { fed: true, stdin: out };
    });
    this.output = out;
  }

  // The statement's redirects come after the body's own (`bash <<<x < f` reads f): a stdin one
  // overrides what the body reads.
  redirected(node: Node, flags: Flags) {
    let override: Flags | undefined;
    for (const c of node.children)
      if (REDIRECTS.has(c.type) && redirect(this, c)) override = { fed: true, stdin: this.stdinOf(c) };
    // `git <<EOF push`: the grammar hangs the words after the delimiter on the here-document.
    const extra = node.children.filter((c) => c.type === "heredoc_redirect").flatMap(input.hungWords);
    const body = node.childForFieldName("body");
    if (body?.type === "command") this.command(body, flags, override, extra);
    else if (body?.type === "pipeline")
      this.pipeline(body, { ...flags, fed: flags.fed || !!override }, override, extra);
    else if (body && extra.length > 0) this.words(body, override ?? flags, extra);
    else if (body && body.type !== "function_definition") this.visit(body, override ?? flags);
    else if (body) this.visit(body);
    const printed = body && PRINTING.has(body.type) ? this.output : undefined;
    // `cat > s <<EOF`: the grammar hangs the redirects after the delimiter on the here-document.
    const redirects = node.children.flatMap((c) =>
      c.type === "heredoc_redirect" ? [c, ...c.childrenForFieldName("redirect")] : [c],
    );
    if (input.writesStdout(node)) recordWrites(redirects, printed, this.files);
    let out = input.writesStdout(node) ? undefined : printed;
    for (const c of node.children)
      // Not `c !== body`: each access makes a new Node object, so that would walk the body twice.
      if (!body || !c.equals(body)) {
        if (c.type === "heredoc_redirect") out = this.heredocRedirect(c, out);
        else this.visitChildren(c);
      }
    this.output = out;
  }

  // `cat <<EOF | sh`: the grammar puts the rest of the pipeline inside the here-document's
  // node, where it reads what the statement prints. Returns what the line's last part prints.
  heredocRedirect(node: Node, printedBefore: Stdin | undefined): Stdin | undefined {
    let out = printedBefore;
    for (const c of node.children) {
      if (c.type === "&" && !c.isNamed) this.background = true;
      if (c.type === "pipeline" && /^\|/.test(c.firstChild?.type ?? "")) {
        this.pipeline(c, { fed: true, stdin: out });
        out = this.output;
      } else this.visit(c);
    }
    heredoc(this, node);
    return out;
  }

  // A statement with words the grammar put elsewhere: a command takes them, anything else cannot.
  words(node: Node, flags: Flags, extra: Node[]) {
    if (node.type === "command") return this.command(node, flags, undefined, extra);
    this.opaque(node, "words after a here-document that the analysis cannot place");
    this.visit(node, flags);
  }

  command(node: Node, flags: Flags, override?: Flags, extra: Node[] = []) {
    const assignments: string[] = [];
    const words: Word[] = [];
    // Each word's template (stdin.ts), for what `echo` or `printf` prints.
    const templates: string[] = [];
    let fed = flags.fed;
    let stdin = flags.stdin;
    const ranges: { start: number; end: number }[] = [];
    let opaque: string | undefined;
    let nameNode: Node | undefined;
    let prevEnd = -1;
    for (const c of [...node.children, ...extra]) {
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
        templates[last] += input.template(c);
        if (ranges[last]) ranges[last] = { start: ranges[last].start, end: c.endIndex };
        continue;
      }
      if (c.type === "variable_assignment") {
        const problem = assignmentProblem(c);
        if (problem) opaque ??= problem;
        assignments.push(c.text);
      } else if (c.type === "command_name") {
        const inner = c.firstNamedChild ?? c;
        nameNode = inner;
        const w = wordOf(inner);
        if (w.dynamic) opaque ??= "the program is only known at run time";
        words.push(w);
        templates.push(input.template(inner));
        ranges.push({ start: c.startIndex, end: c.endIndex });
      } else if (REDIRECTS.has(c.type)) {
        if (redirect(this, c)) {
          fed = true;
          stdin = this.stdinOf(c);
        }
      } else if (c.isNamed && c.type !== "comment") {
        words.push(wordOf(c));
        templates.push(input.template(c));
        ranges.push({ start: c.startIndex, end: c.endIndex });
      }
    }
    if (override) ({ fed, stdin } = override);
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
    // What a wrapper runs (`timeout 5 ftp`) reads the same stdin; a script it hands a shell
    // was analysed with it already.
    const fedText = stdin ? { stdin: { text: stdin.text, exact: stdin.exact } } : {};
    const run = unwrap({ ...base, ...fedText }, this.context(fed, stdin));
    this.commands.push(...(stdin ? run.map((c) => (c.stdin ? c : { ...c, ...fedText })) : run));
    if (nameNode && words[0]?.dynamic) this.commands.push(...programReadings(nameNode, words, node.text, this));
    const script = substitutedScript(node, this);
    if (script !== undefined) {
      const why = `\`${argv[0]}\` runs what a process substitution prints, read as the script it is`;
      const a = this.context(false, undefined).analyse(script, {});
      this.commands.push(
        ...a.commands.map((c) => ({ ...c, wrappedBy: argv[0], ranges: undefined, opaque: c.opaque ?? why })),
      );
    }
    this.variables(node.children);
    let out =
      opaque || base.programPath || input.writesStdout(node) ? undefined : input.printed(words, templates, stdin);
    // `H=evil.com; echo "open $H"`: the text again with each value the line gives H.
    const variants = out && !out.exact ? filled(templates, this.values) : [];
    const readings = variants.map((t) => input.printed(words, t, stdin));
    if (readings.length > 0 && readings.every((r) => r !== undefined))
      out = { text: readings.map((r) => r!.text).join("\n"), exact: false };
    const called = words.length > 0 && !words[0].dynamic ? this.functions.get(argv[0]) : undefined;
    if (!out && !opaque && !input.writesStdout(node) && called) out = { text: called.text, exact: false };
    this.output = out && this.shadowed ? { ...out, exact: false } : out;
  }

  // `GIT_SSH_COMMAND='…'`, `export RSYNC_RSH=…`: what a later program runs from the variable.
  variables(nodes: readonly Node[]) {
    for (const n of nodes) {
      const name = n.type === "variable_assignment" ? n.childForFieldName("name")?.text : undefined;
      const value = n.childForFieldName("value");
      const w = value ? wordOf(value) : undefined;
      const texts = !value || !w ? undefined : w.dynamic ? valuesOf(value, this) : [w.text];
      if (name && texts) this.values.set(name, [...(this.values.get(name) ?? []), ...texts].slice(0, 8));
    }
    this.commands.push(...variableCode(nodeSettings(nodes), this.context(false, undefined), unwrap));
    this.commands.push(...this.startupFiles(nodes.filter((n) => n.type === "variable_assignment").map((n) => n.text)));
  }

  // `echo 'rm -rf /' > e; BASH_ENV=e bash -c …`: the file a shell runs first, as the line wrote it.
  startupFiles(assignments: readonly string[]): SimpleCommand[] {
    return assignments.flatMap((a) => {
      const m = /^([A-Za-z_]\w*)=(.*)$/s.exec(a);
      const text = m && STARTUP_FILES.test(m[1]) ? this.files.get(fileKey(m[2])) : undefined;
      if (!text) return [];
      const why = `a shell runs the file ${m![1]} names first, as the line wrote it`;
      return inner(this.context(false, undefined).analyse(text.text, {}), "bash", why);
    });
  }

  // What a redirect feeds stdin: a here-document's or here-string's text (redirects.ts), what a
  // process substitution prints (`ftp < <(printf 'open …')`), or a file the line wrote before.
  stdinOf(r: Node): Stdin | undefined {
    const known = stdinOf(r, this.source);
    if (known) return known;
    const file = inputFile(r);
    if (file !== undefined) return this.files.get(file);
    const sub = inputSubstitution(r);
    if (!sub) return undefined;
    // A walk of its own, whose commands are dropped: the substitution is walked in its place.
    const w = new Walker(this.source, this.depth, false, this.nested);
    for (const [k, v] of this.values) w.values.set(k, v);
    for (const [k, v] of this.functions) w.functions.set(k, v);
    for (const [k, v] of this.files) w.files.set(k, v);
    w.shadowed = this.shadowed;
    const out = w.sequence(sub);
    return out && { text: out.text, exact: false };
  }

  context(fed: boolean | undefined, stdin: Stdin | undefined): Context {
    return {
      fed: !!fed,
      ...(stdin ? { stdin } : {}),
      depth: this.depth,
      analyse: (text, inherit) => {
        const a = this.nested(text, this.depth + 1, { ...inherit, shadowed: this.shadowed });
        this.scripts.push(text, ...a.scripts);
        return a;
      },
    };
  }

  arithmeticReadsVariables(node: Node): boolean {
    return hasDescendant(node, "variable_name", "simple_expansion", "expansion", "subscript", "command_substitution");
  }
}

/** `${v:offset}`, `${v:offset:length}` with an offset or length that is not a number. */
function substringOfVariables(node: Node): boolean {
  const colon = node.children.findIndex((c) => c.type === ":" && !c.isNamed);
  if (colon < 0) return false;
  return node.children.slice(colon + 1).some((c) => c.isNamed && c.type !== "number");
}
