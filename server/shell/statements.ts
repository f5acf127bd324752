// The statements of a command line that are not a program run: assignments, declarations
// (`export`, `declare`, `local`, `unset`) and tests (`[ … ]`, `[[ … ]]`). Each is listed like a
// command, and marked opaque where bash would evaluate text in it as code (integer and
// name-reference attributes, subscripts, arithmetic operands) or where it changes what a later
// program is (`PATH`, `LD_PRELOAD`, `GIT_DIR`, ...).
import type { Node } from "./parser";
import type { SimpleCommand, Word } from "./types";
import { wordOf } from "./words";
import { SENSITIVE_VARIABLE } from "./wrappers";

export function hasDescendant(node: Node, ...types: string[]): boolean {
  return node.descendantsOfType(types).length > 0;
}

// Text that becomes code when bash evaluates it as a subscript (`a[$(cmd)]`), e.g. in
// arithmetic or `printf -v`: flagged even in static words.
export function latentCode(text: string): boolean {
  return text.includes("[") && (text.includes("$(") || text.includes("`"));
}

export function assignmentProblem(node: Node): string | undefined {
  const name = node.childForFieldName("name");
  if (!name || name.type !== "variable_name") return "an assignment to an array element evaluates its subscript";
  if (SENSITIVE_VARIABLE.test(name.text)) return `setting ${name.text} changes what later programs run`;
  const value = node.childForFieldName("value");
  if (value && latentCode(wordOf(value).text)) return "a quoted `$(…)` inside a subscript runs where bash evaluates it";
  return undefined;
}

/** `X=1` (or several) as a statement of its own. */
export function assignmentStatement(node: Node): SimpleCommand {
  const parts = node.type === "variable_assignments" ? node.namedChildren : [node];
  const problem = parts.map((p) => assignmentProblem(p)).find(Boolean);
  return {
    argv: [],
    words: [],
    programPath: false,
    assignments: parts.map((p) => p.text),
    source: node.text,
    ...(problem ? { opaque: problem } : {}),
  };
}

// export/declare/local/readonly/typeset/unset: integer and name-reference attributes, and
// names only known at run time, make bash evaluate text as code.
export function declaration(node: Node): SimpleCommand {
  const keyword = node.firstChild?.text ?? "declare";
  const words: Word[] = [{ text: keyword, dynamic: false }];
  let opaque: string | undefined;
  for (const c of node.namedChildren) {
    if (c.type === "variable_assignment") {
      opaque ??= assignmentProblem(c);
      words.push({ text: c.text, dynamic: hasDescendant(c, "simple_expansion", "expansion", "command_substitution") });
    } else {
      const w = c.type === "variable_name" ? { text: c.text, dynamic: false } : wordOf(c);
      if (w.dynamic) opaque ??= `${keyword} with a name only known at run time`;
      else if (/^[-+]\w*[in]/.test(w.text)) opaque ??= `${keyword} ${w.text} makes bash evaluate values as code`;
      else if (SENSITIVE_VARIABLE.test(w.text)) opaque ??= `${keyword} ${w.text} changes what later programs run`;
      else if (w.text.includes("[")) opaque ??= "a subscript is evaluated as code";
      words.push(w);
    }
  }
  return {
    argv: words.map((w) => w.text),
    words,
    programPath: false,
    assignments: [],
    source: node.text,
    ...(opaque ? { opaque } : {}),
  };
}

// `for NAME in …` (and `select`) assigns NAME like `NAME=…` does: `for PATH in .; do ls; done`
// runs ./ls, and a value with a subscript runs where bash evaluates it.
export function loopProblem(node: Node): string | undefined {
  const name = node.childForFieldName("variable");
  if (name && SENSITIVE_VARIABLE.test(name.text)) return `a loop over ${name.text} changes what later programs run`;
  for (const v of node.childrenForFieldName("value"))
    if (latentCode(wordOf(v).text)) return "a quoted `$(…)` inside a subscript runs where bash evaluates it";
  return undefined;
}

// `[[ … ]]`: its arithmetic operators and -v evaluate operands as code (`[ … ]` only -v). An
// arithmetic operand that names a variable evaluates that variable's value, which a loop or
// `printf -v` earlier on the line may have filled with `a[$(cmd)]`: only numbers are plain.
export function testCommand(node: Node): SimpleCommand {
  const text = node.text;
  const bracket = node.firstChild?.type === "[" ? "[" : "[[";
  const inner = ` ${text.slice(bracket.length, -bracket.length)} `;
  const named = /\s(-v|-R)\s/.test(inner);
  const arithmetic = bracket === "[[" && /\s(-eq|-ne|-lt|-le|-gt|-ge)\s/.test(inner);
  const operandsStatic = !hasDescendant(
    node,
    "simple_expansion",
    "expansion",
    "command_substitution",
    "process_substitution",
    "arithmetic_expansion",
  );
  // What is left once operators are taken out: for arithmetic, only digits may remain.
  const operands = inner.replace(/\s(-[a-zA-Z]+|[!=<>&|()]+)(?=\s)/g, " ");
  const opaque =
    // A glob may expand to a file named `a[$(cmd)]` (`[ -v PWD* ]`).
    ((named || arithmetic) && (!operandsStatic || /[[$`*?]/.test(inner))) || (arithmetic && /[^\s\d]/.test(operands))
      ? `\`${bracket}\` can evaluate an operand as code`
      : undefined;
  return {
    argv: [bracket],
    words: [{ text, dynamic: !operandsStatic }],
    programPath: false,
    assignments: [],
    source: text,
    ...(opaque ? { opaque } : {}),
  };
}
