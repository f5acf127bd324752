// What a command reads on its standard input when the line itself holds that text: the body of a
// here-document, the word of a here-string, or what `cat`, `tee`, `echo` or `printf` earlier in
// a pipe print of such text. A shell fed it (`bash <<'EOF'`, `cat <<EOF | sh`, `echo … | bash`)
// runs it as a script, so the analysis reads it as one (wrappers.ts). Text bash expands first
// (an unquoted delimiter, a `"$X"` word) is kept as its template, its run-time parts left as the
// expansions they are, and marked inexact: what the shell reads then is only known at run time.
import type { Node } from "./parser";
import type { Word } from "./types";
import { decodeAnsiC, delimiterAt, joinedComments, wordOf } from "./words";

export interface Stdin {
  readonly text: string;
  /** The text is what the program reads; else bash's template of it (see above). */
  readonly exact: boolean;
}

// What bash reads as taking stdin from elsewhere: a file, a descriptor, a here-document.
const STDIN_OPS = new Set(["<", "<&", "<>", "&<", "<<", "<<-", "<<<"]);

// What the grammar may hang on a here-document that is an argument of its command.
const ARGUMENTS = new Set([
  "word",
  "number",
  "raw_string",
  "string",
  "translated_string",
  "ansi_c_string",
  "concatenation",
  "simple_expansion",
  "expansion",
  "command_substitution",
  "process_substitution",
  "arithmetic_expansion",
  "brace_expression",
]);

/** The words after a here-document's delimiter (`git <<EOF push`): its command's arguments,
 *  which the grammar hangs on the here-document. */
export function hungWords(heredoc: Node): Node[] {
  return heredoc.namedChildren.filter((c) => ARGUMENTS.has(c.type));
}

/** Whether a redirect gives the command's stdin other text than it had. */
export function feedsStdin(node: Node): boolean {
  const op = node.children.find((c) => !c.isNamed)?.type ?? "";
  const fd = node.children.find((c) => c.type === "file_descriptor")?.text;
  return node.type !== "file_redirect" || (STDIN_OPS.has(op) && (fd ?? "0") === "0");
}

/** Whether a statement's redirects send its standard output elsewhere than down a pipe; the
 *  grammar hangs those after a here-document's delimiter on the here-document. */
export function writesStdout(node: Node): boolean {
  const redirects = node.children.flatMap((c) =>
    c.type === "heredoc_redirect" ? [c, ...c.childrenForFieldName("redirect")] : [c],
  );
  return redirects.some((r) => {
    if (r.type !== "file_redirect") return false;
    const op = r.children.find((c) => !c.isNamed)?.type ?? "";
    const fd = r.children.find((c) => c.type === "file_descriptor")?.text;
    return op.includes(">") && (fd === undefined || fd === "1");
  });
}

/** The text a here-document feeds, as the program reads it; undefined when unterminated. */
export function hereDocument(node: Node, source: string): Stdin | undefined {
  const start = node.children.find((c) => c.type === "heredoc_start");
  const body = node.children.find((c) => c.type === "heredoc_body");
  const end = node.children.find((c) => c.type === "heredoc_end");
  if (!start || !body || !end || end.isMissing) return undefined;
  // From the line after the operator's to the delimiter's line, as written: the grammar drops a
  // `<<-` body's first tabs from its node.
  const from = source.lastIndexOf("\n", body.startIndex - 1) + 1;
  const to = source.lastIndexOf("\n", end.startIndex - 1) + 1;
  let text = from > 0 && to >= from ? source.slice(from, to) : "";
  if (node.children.some((c) => c.type === "<<-")) text = text.replace(/^\t+/gm, "");
  // A quoted delimiter (`'EOF'`, `"EOF"`, `\EOF`, `E"O"F`) leaves the body as it is written.
  return /['"\\]/.test(start.text) ? { text, exact: true } : expandedBody(text);
}

// An unquoted body: a backslash escapes only `$`, `` ` ``, `\` and a line break; `$…` and
// backquotes are expanded by bash before the program reads the text.
function expandedBody(body: string): Stdin {
  let text = "";
  let exact = true;
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (c === "\\" && /[$`\\\n]/.test(body[i + 1] ?? "")) {
      if (body[i + 1] !== "\n") text += body[i + 1];
      i++;
      continue;
    }
    if (c === "`" || (c === "$" && /[\w{(@*#?$!-]/.test(body[i + 1] ?? ""))) exact = false;
    text += c;
  }
  return { text, exact };
}

/** The text a here-string feeds: its word, as bash expands it, and a line break. */
export function hereString(node: Node): Stdin | undefined {
  const word = node.namedChildren.at(-1);
  if (!word || word.type === "file_descriptor") return undefined;
  const w = wordOf(word);
  return { text: `${w.dynamic ? template(word) : w.text}\n`, exact: !w.dynamic };
}

/** A word as its value where static, its run-time parts left as the expansions they are. */
export function template(node: Node): string {
  const w = wordOf(node);
  if (!w.dynamic) return w.text;
  switch (node.type) {
    case "string":
    case "translated_string":
      return node.text
        .slice(node.type === "string" ? 1 : 2, -1)
        .replace(/\\([$`"\\\n])/g, (_, c: string) => (c === "\n" ? "" : c));
    case "raw_string":
      return node.text.slice(1, -1);
    case "ansi_c_string":
      return decodeAnsiC(node.text.slice(2, -1));
    case "concatenation":
      return node.children.map(template).join("");
    default:
      return node.text;
  }
}

/** Whether `cat`, `echo` and the like may not be the programs they name on this line: a function
 *  defined anywhere in it (a loop may call it before its definition), `eval` that may define
 *  one, or a program only known at run time that may be `eval`. */
export function shadows(root: Node): boolean {
  if (root.descendantsOfType("function_definition").length > 0) return true;
  return root.descendantsOfType(["command_name", "word", "raw_string", "string", "concatenation"]).some((n) => {
    const w = wordOf(n.type === "command_name" ? (n.firstNamedChild ?? n) : n);
    return (n.type === "command_name" && w.dynamic) || w.text.toLowerCase() === "eval";
  });
}

/** Whether the line's `exec` points the shell's own stdin elsewhere (`exec <x.sh`) for what
 *  follows, or a loop brings back: what a group or a script shares is then not its redirect's. */
export function replacesStdin(root: Node): boolean {
  return root.descendantsOfType("command").some((c) => {
    const name = c.childForFieldName("name");
    if (!name || wordOf(name.firstNamedChild ?? name).text !== "exec") return false;
    const statement = c.parent?.type === "redirected_statement" ? [c, c.parent] : [c];
    return statement.some((s) => s.children.some((r) => /_redirect$/.test(r.type) && feedsStdin(r)));
  });
}

/** What `cat`, `tee`, `echo` or `printf` prints to a pipe, when the line shows all of it. */
export function printed(words: readonly Word[], templates: readonly string[], stdin?: Stdin): Stdin | undefined {
  const program = words[0]?.dynamic ? undefined : words[0]?.text;
  const args = words.slice(1);
  const at = (i: number) => (args[i].dynamic ? templates[i + 1] : args[i].text);
  const exact = args.every((w) => !w.dynamic);
  switch (program) {
    case "cat":
      return stdin && args.every((w) => !w.dynamic && /^(-|-u)$/.test(w.text)) ? stdin : undefined;
    case "tee":
      // Each file gets a copy; the pipe gets all of it.
      return stdin && args.every((w) => !w.text.startsWith("-") || /^-[aip]+$/.test(w.text)) ? stdin : undefined;
    case "echo": {
      let i = 0;
      let newline = true;
      let escapes = false;
      for (; i < args.length && !args[i].dynamic && /^-[neE]+$/.test(args[i].text); i++) {
        if (args[i].text.includes("n")) newline = false;
        for (const c of args[i].text) if (c === "e" || c === "E") escapes = c === "e";
      }
      const text =
        args
          .slice(i)
          .map((_, k) => at(i + k))
          .join(" ") + (newline ? "\n" : "");
      if (!text.includes("\\")) return { text, exact };
      const decoded = escaped(text);
      // dash's echo (`sh -c`) reads escapes without `-e`: the text is then either reading.
      return escapes || !decoded ? decoded : { text: `${text}\n${decoded.text}`, exact: false };
    }
    case "printf":
      return printf(
        args.map((_, i) => at(i)),
        args[0]?.dynamic ?? true,
        exact,
      );
    default:
      return undefined;
  }
}

const ESCAPES: Record<string, string> = { n: "\n", t: "\t", "\\": "\\", '"': '"', "'": "'" };

// Text with escapes read as `$'…'` reads them, never exact; `\c` (print no more) is not followed.
function escaped(text: string): Stdin | undefined {
  return /\\c/.test(text) ? undefined : { text: decodeAnsiC(text), exact: false };
}

// A format of text, `%s`, `%%` and the common escapes, reused until the arguments run out; other
// escapes (`\x72`, `\162`) are read too, never exact.
function printf(args: string[], formatDynamic: boolean, exact: boolean): Stdin | undefined {
  if (args[0] === "--") args = args.slice(1);
  const format = args[0];
  if (format === undefined || formatDynamic || format.startsWith("-")) return undefined;
  const pieces: (string | null)[] = [];
  let other = false;
  for (let i = 0; i < format.length; i++) {
    const c = format[i];
    const next = format[i + 1] ?? "";
    if (c === "\\" && Object.hasOwn(ESCAPES, next)) {
      pieces.push(ESCAPES[next]);
      i++;
    } else if (c === "\\") {
      other = true;
      pieces.push(c);
    } else if (c === "%") {
      if (next === "%") pieces.push("%");
      else if (next === "s") pieces.push(null);
      else return undefined;
      i++;
    } else pieces.push(c);
  }
  const values = args.slice(1);
  const slots = pieces.filter((p) => p === null).length;
  let text = "";
  let used = 0;
  do {
    for (const p of pieces) text += p ?? values[used++] ?? "";
  } while (slots > 0 && used < values.length);
  return other ? escaped(text) : { text, exact };
}

// A here-document operator, up to its delimiter word (read by delimiterAt, words.ts).
const OPERATOR = /(?:(?<![\w<])(\d+))?(?<!<)<<(?!<)(-?)([ \t]*)(?=[^\s|&;<>()])/g;

/**
 * The line with the here-documents the grammar misreads spelled as it reads them, or undefined
 * when there is none or one cannot be spelled so: a delimiter that runs into an operator
 * (`cat <<EOF|sh`, read as the delimiter `EOF|sh`), a delimiter quoted in part (`<<E"O"F`), `0<<`,
 * a body that the end of the line ends (bash warns, then runs it). What bash runs is the same.
 * `quoteAll` quotes every delimiter too: each body is then data, and ends where bash ends it.
 */
export function repairHereDocuments(line: string, quoteAll = false): string | undefined {
  const missing: string[] = [];
  let fixed = "";
  let last = 0;
  const operator = new RegExp(OPERATOR.source, "g");
  for (let m = operator.exec(line); m; m = operator.exec(line)) {
    const [whole, fd, dash, space] = m;
    const word = delimiterAt(line, m.index + whole.length);
    if (!word) return undefined;
    if (!word.text) continue;
    const bare = word.text;
    // The grammar drops backslashes from a quoted delimiter and ends it at a quote or a line break.
    if (/['\\\r\n]/.test(bare)) return undefined;
    const after = line.slice(word.end);
    const end = new RegExp(`^${dash ? "\\t*" : ""}${bare.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\r?$`, "m");
    const body = after.slice(after.indexOf("\n") + 1);
    if (after.indexOf("\n") < 0 || !end.test(body)) missing.push(bare);
    const glued = /^[|&;<>()]/.test(after) ? " " : "";
    // The grammar knows no descriptor before `<<`; 0 is stdin all the same.
    const spelled = word.quoted || quoteAll ? `'${bare}'` : bare;
    fixed += `${line.slice(last, m.index)}${fd === undefined || fd === "0" ? "" : fd}<<${dash}${space}${spelled}${glued}`;
    last = word.end;
    operator.lastIndex = word.end;
  }
  fixed += line.slice(last);
  const repaired = missing.length > 0 ? `${fixed}\n${missing.join("\n")}` : fixed;
  return repaired === line ? undefined : repaired;
}

/**
 * Whether bash ends some here-document of the line at a line before the one the grammar ends it
 * at: the delimiter quoted in part (`<<E'O'F`, `<<$'EOF'`; bash's is `EOF`, the grammar's the
 * raw text), or an expansion the grammar reads across that line (`${x:-'⏎EOF⏎…'}`). What follows
 * that line is then commands to bash, and data to the grammar.
 */
export function endsEarlier(root: Node, line: string): boolean {
  return root.descendantsOfType("heredoc_redirect").some((node) => {
    const start = node.children.find((c) => c.type === "heredoc_start");
    const body = node.children.find((c) => c.type === "heredoc_body");
    const end = node.children.find((c) => c.type === "heredoc_end");
    if (!start || !body || !end || end.isMissing) return false;
    const word = delimiterAt(line, start.startIndex);
    if (!word) return true;
    const tabs = node.children.some((c) => c.type === "<<-");
    const from = line.lastIndexOf("\n", body.startIndex - 1) + 1;
    const to = line.lastIndexOf("\n", end.startIndex - 1) + 1;
    return line
      .slice(from, to)
      .split("\n")
      .some((l) => (tabs ? l.replace(/^\t+/, "") : l).replace(/\r$/, "") === word.text);
  });
}

const HERE_DOCUMENT = "the grammar misreads a here-document here; bash may run this";
const DELIMITER =
  "bash ends this here-document at an earlier line than the grammar (a delimiter quoted in part): bash may run what follows";
const COMMENT = "a line continuation before `#` makes it part of a word, not a comment; bash may run this";

/**
 * Where the grammar reads the line otherwise than bash: each a line spelled as the grammar then
 * reads it as bash does (its commands are listed, never seen through), or only a reason when it
 * cannot be spelled so.
 */
export function misreadings(root: Node, line: string): { line?: string; why: string }[] {
  const found: { line?: string; why: string }[] = [];
  const earlier = endsEarlier(root, line);
  if (root.hasError || earlier) {
    const fixed = repairHereDocuments(line, earlier);
    const why = earlier ? DELIMITER : HERE_DOCUMENT;
    if (fixed !== undefined) found.push({ line: fixed, why });
    else if (earlier) found.push({ why });
  }
  const joined = joinedComments(root, line);
  if (joined !== undefined) found.push({ line: joined, why: COMMENT });
  return found;
}
