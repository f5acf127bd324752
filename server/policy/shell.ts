// How a policy rule's command prefix (`git push`, `rm -rf`) matches one simple command of the
// shared shell analysis (server/shell/analyse.ts). A word only known at run time could be any
// word, so it can neither satisfy an allow rule nor rule out a deny or ask rule.
import { analyseShell, basename, type SimpleCommand } from "../shell/analyse";

export { basename };

/** Splits a flag cluster into single flags: `-rf` → `-r`, `-f`; long flags stay whole. */
export function expandFlags(word: string): string[] {
  if (/^-[a-zA-Z]{2,}$/.test(word)) return [...word.slice(1)].map((c) => `-${c}`);
  return [word];
}

export type Match = "yes" | "no" | "maybe";

/**
 * Does `command` start with `prefix` (words of a rule like `git push` or `rm -rf`)? Flags in the
 * prefix must each appear among the command's flags in any order or cluster, so `rm -rf` also
 * matches `rm -r -f x`. `strict` (allow rules): the rule's words lead the command's words.
 * `loose` (ask and deny rules): they appear in order anywhere after the program, so global
 * options before a sub-command (`git -C dir push`) cannot slip past a deny. "maybe": only a
 * word known at run time stands between the command and a match.
 */
export function matchPrefix(command: SimpleCommand, prefix: string[], mode: "strict" | "loose" = "strict"): Match {
  if (prefix.length === 0) return "no";
  // A statement with no program: an assignment, or a line the analysis could not read at all.
  if (command.argv.length === 0) return command.opaque ? "maybe" : "no";
  if (command.words[0]?.dynamic) return "maybe";
  // What the analysis could not see through, or inline code (`python3 -c`, `awk '…'`), can do
  // what any rule names; a rule that visibly matches still matches for certain.
  const unseen = command.opaque !== undefined || command.runsCode !== undefined;
  if (basename(prefix[0]) !== command.argv[0]) return unseen ? "maybe" : "no";
  const args = command.words.slice(1);
  const dynamic = args.some((w) => w.dynamic);
  const fixed = args.filter((w) => !w.dynamic).map((w) => w.text);
  const wanted = prefix.slice(1);
  const words = wanted.filter((w) => !w.startsWith("-"));
  const flags = wanted.filter((w) => w.startsWith("-")).flatMap(expandFlags);
  const cmdWords = fixed.filter((w) => !w.startsWith("-"));
  const cmdFlags = new Set(fixed.filter((w) => w.startsWith("-")).flatMap(expandFlags));
  let ok: boolean;
  if (mode === "strict") {
    ok = words.every((w, i) => cmdWords[i] === w) && !args.slice(0, words.length).some((w) => w.dynamic);
  } else {
    let at = 0;
    for (const w of cmdWords) if (at < words.length && w === words[at]) at++;
    ok = at === words.length;
  }
  ok &&= flags.every((f) => cmdFlags.has(f));
  if (ok) return mode === "strict" && (dynamic || unseen) ? "maybe" : "yes";
  return dynamic || unseen ? "maybe" : "no";
}

/** Boolean form, for callers that only accept a definite match. */
export function matchesPrefix(command: SimpleCommand, prefix: string[], mode: "strict" | "loose" = "strict"): boolean {
  return matchPrefix(command, prefix, mode) === "yes";
}

/** The simple commands of `line` (see server/shell/analyse.ts). */
export function commandsOf(line: string): readonly SimpleCommand[] {
  return analyseShell(line).commands;
}
