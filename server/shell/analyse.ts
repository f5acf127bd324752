// The one shell analysis: walks bash's syntax tree of a command line and lists every simple
// command it would run — across newlines, `;`, `&`, `&&`, `||`, pipes, subshells, groups,
// if/while/for/case bodies, functions, here-documents, process and command substitution — with
// wrappers unwrapped (wrappers.ts). The org policy, session approvals and the read-only
// classifier all judge this list. What it cannot see through is marked opaque, never guessed.
// One analysis per line: the answer is memoized, frozen, for every consumer of one call.
import { parseShell } from "./parser";
import type { ShellAnalysis, SimpleCommand, Word } from "./types";
import { memoized } from "./memo";
import * as input from "./stdin";
import { basename, Walker, type Inherit } from "./walker";

export type { ShellAnalysis, SimpleCommand, Word };
export { basename };

const MAX_DEPTH = 6;
// Walking costs tens of µs a node on the main thread: a line with more is not analysed.
const MAX_NODES = 2_000;
const MAX_REPAIRS = 3;

// `inherit`: the stdin of the command that runs the line as a script, which its commands share.
// `repaired`: how many repairs (stdin.ts, misreadings) gave the line.
function analyseAt(line: string, depth: number, topLevel: boolean, inherit?: Inherit, repaired = 0): ShellAnalysis {
  const source = (s: string): ShellAnalysis => ({
    commands: [{ argv: [], words: [], programPath: false, assignments: [], source: line, opaque: s }],
    writes: false,
    writeTargets: [],
    readTargets: [],
    background: false,
    scripts: [],
  });
  if (depth > MAX_DEPTH) return source("commands are nested too deeply to follow");
  const tree = parseShell(line);
  if (!tree) return source("the command line is too long to analyse");
  try {
    if (tree.rootNode.descendantCount > MAX_NODES) return source("the command line is too long to analyse");
    const w = new Walker(line, depth, topLevel, (text, d, inh) => analyseAt(text, d, false, inh));
    if (inherit) w.inherited = { fed: inherit.fed, stdin: inherit.stdin };
    w.shadowed = !!inherit?.shadowed || input.shadows(tree.rootNode);
    w.replaced = input.replacesStdin(tree.rootNode);
    w.visit(tree.rootNode);
    // Some errors hide inside nodes the walk reads as words.
    if (tree.rootNode.hasError && !w.commands.some((c) => c.opaque)) w.opaque(tree.rootNode, "bash could not parse it");
    // Where the grammar reads the line otherwise than bash (stdin.ts, misreadings): what bash runs
    // is listed too, never seen through. A repaired line may hold another misreading: a few rounds.
    for (const { line: fixed, why } of repaired < MAX_REPAIRS ? input.misreadings(tree.rootNode, line) : []) {
      if (fixed === undefined) {
        w.opaque(tree.rootNode, why);
        continue;
      }
      const again = analyseAt(fixed, depth, false, inherit, repaired + 1);
      w.commands.push(...again.commands.map((c) => (c.opaque ? c : { ...c, opaque: why })));
      w.scripts.push(...again.scripts);
    }
    return {
      commands: w.commands,
      writes: w.writes,
      writeTargets: w.writeTargets,
      readTargets: w.readTargets,
      background: w.background,
      scripts: w.scripts,
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
