// A program or script only known at run time whose text the line shows: `$(echo rm) -rf /`,
// `` `printf rm` -rf / ``, `$r -rf /` after `r=rm` (or `r="rm -rf"`, `s=$r`), `${r:-rm}`,
// `$(echo r)m`, `source <(echo 'rm -rf /')`. The command stays opaque (a function, a later
// assignment or IFS may change what runs), but it is listed again with each value the line
// gives put in place, so a deny or ask rule on that program holds; an opaque command never
// satisfies an allow rule. A reading is only ever grounds for a deny or a question, so inexact
// text (a function may shadow `echo`, a part may be a template) is read too.
import type { Node } from "./parser";
import type { Stdin } from "./stdin";
import type { SimpleCommand, Word } from "./types";
import { wordOf } from "./words";

/** What the walk knows: the text each substitution prints (by its start in the line), and the
 *  static values the line assigns each variable. */
export interface Known {
  readonly printed: ReadonlyMap<number, Stdin | undefined>;
  readonly values: ReadonlyMap<string, readonly string[]>;
}

const WHY = "the program is only known at run time; it is listed as the value the line gives it";
const MAX_READINGS = 8;
const NAME = String.raw`[A-Za-z_]\w*`;

/** The texts a word's node may hold by what the line shows, or undefined when any part is unknown. */
export function valuesOf(node: Node, known: Known): string[] | undefined {
  if (node.type === "command_substitution") {
    const out = known.printed.get(node.startIndex);
    return out ? [out.text.replace(/\n+$/, "")] : undefined;
  }
  if (node.type === "string" && node.namedChildren.length === 1 && node.text.startsWith('"'))
    return valuesOf(node.namedChildren[0], known);
  const plain = new RegExp(`^\\$(?:\\{(${NAME})\\}|(${NAME}))$`).exec(node.text);
  if (plain) {
    const v = known.values.get(plain[1] ?? plain[2]);
    return v ? [...v] : undefined;
  }
  // `${r:-rm}`, `${r=rm}`: the variable's values, or the default when it is unset or empty.
  const fallback = new RegExp(`^\\$\\{(${NAME}):?[-=]([^\${}\`'"\\\\]*)\\}$`).exec(node.text);
  if (fallback) return [...(known.values.get(fallback[1]) ?? []), fallback[2]];
  if (node.type === "concatenation") {
    let texts = [""];
    for (const part of node.children) {
      const w = wordOf(part);
      const values = w.dynamic ? valuesOf(part, known) : [w.text];
      if (!values) return undefined;
      texts = texts.flatMap((t) => values.map((v) => t + v)).slice(0, MAX_READINGS);
    }
    return texts;
  }
  return undefined;
}

/** The command again with each value its run-time program word may have, per the line. */
export function programReadings(name: Node, words: readonly Word[], source: string, known: Known): SimpleCommand[] {
  const texts = valuesOf(name, known) ?? [];
  return texts.slice(0, MAX_READINGS).flatMap((text) => {
    // Split as an unquoted word would be: a quoted one is not, but its one word is a program
    // that matches no rule's program then, so splitting it too decides nothing.
    const program = text
      .split(/[ \t\n]+/)
      .filter(Boolean)
      .map((t) => ({ text: t, dynamic: false }));
    if (program.length === 0) return [];
    const all = [...program, ...words.slice(1)];
    const first = all[0].text;
    const reading: SimpleCommand = {
      argv: [first.slice(first.lastIndexOf("/") + 1), ...all.slice(1).map((w) => w.text)],
      words: all,
      assignments: [],
      source,
      programPath: first.includes("/"),
      opaque: WHY,
    };
    return [reading];
  });
}

/** The script `source <(…)`, `. <(…)` or `bash <(…)` runs, when the line shows what `…` prints. */
export function substitutedScript(command: Node, known: Known): string | undefined {
  const [name, first] = command.namedChildren.filter((c) => c.type !== "variable_assignment" && c.type !== "comment");
  if (name?.type !== "command_name" || first?.type !== "process_substitution") return undefined;
  const program = name.text.slice(name.text.lastIndexOf("/") + 1);
  if (!/^(source|\.|bash|sh|dash|zsh|ksh|mksh|ash)$/.test(program)) return undefined;
  return known.printed.get(first.startIndex)?.text;
}
