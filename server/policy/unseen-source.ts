// The part of a line that may have made a file it copies into a network client's configuration
// (`cp x ~/.ssh/config`, planted-config.ts). What the copy holds is not on the line, but a
// statement that writes or runs anything may have made it from the line's own words; one that
// only reads and prints (`grep evil.com log`) writes no file, so what it names is nobody's
// configuration. Where the line can make such a reader something else (a function, `eval`, an
// alias, `exec > f`, a program only known at run time, anything opaque), it is read whole.
import { analyseShell } from "../shell/analyse";
import { parseShell, type Node } from "../shell/parser";
import { shadows } from "../shell/stdin";

// Programs that print and create no file, whatever their options (no `sort -o`, no `rg --pre`).
const PRINT_ONLY = new Set(
  "grep egrep fgrep cat head tail ls wc echo printf true false test [ pwd which cut tr diff cmp md5sum sha1sum sha256sum".split(
    " ",
  ),
);

/** The text of `line` to read for what an unseen copy may hold: all of it but print-only statements. */
export function unseenSourceText(line: string): string {
  const all = analyseShell(line);
  if (all.background || all.commands.some((c) => c.opaque || c.runsCode || /^(exec|alias)$/.test(c.argv[0] ?? "")))
    return line;
  const tree = parseShell(line);
  if (!tree) return line;
  try {
    if (tree.rootNode.descendantCount > 2_000 || tree.rootNode.hasError || shadows(tree.rootNode)) return line;
    // `a && b`, `a || b` are statements each; a pipeline or group is one (its parts feed each other).
    const statements = (n: Node): Node[] => (n.type === "list" ? n.namedChildren.flatMap(statements) : [n]);
    const kept = tree.rootNode.namedChildren
      .flatMap(statements)
      .filter((s) => s.type !== "comment" && !printsOnly(s.text));
    return kept.map((s) => s.text).join("\n");
  } finally {
    tree.delete();
  }
}

function printsOnly(statement: string): boolean {
  const a = analyseShell(statement);
  return (
    !a.writes &&
    !a.background &&
    a.scripts.length === 0 &&
    a.commands.length > 0 &&
    a.commands.every((c) => !c.opaque && !c.runsCode && !c.programPath && PRINT_ONLY.has(c.argv[0] ?? ""))
  );
}
