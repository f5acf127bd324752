// How a policy rule's command prefix (`git push`, `rm -rf`) matches one simple command of the
// shared shell analysis (server/shell/analyse.ts). A word only known at run time could be any
// word, so it can neither satisfy an allow rule nor rule out a deny or ask rule. An option is
// compared in the form the program reads it: `rm --recursive --force` is `rm -rf`. A git
// sub-command that is not one of git's own may be an alias of the one a rule names.
import { analyseShell, basename, type SimpleCommand } from "../shell/analyse";
import { subcommandWords } from "./arity";
import { GIT_COMMANDS } from "./git-commands";
import { npmCommand } from "./npm-commands";

export { basename };

/** Splits a flag cluster into single flags: `-rf` → `-r`, `-f`, `-4f` → `-4`, `-f`; long flags
 *  and numbers (`-20`) stay whole. */
export function expandFlags(word: string): string[] {
  if (/^-(?=[a-zA-Z0-9]*[a-zA-Z])[a-zA-Z0-9]{2,}$/.test(word)) return [...word.slice(1)].map((c) => `-${c}`);
  return [word];
}

export type Match = "yes" | "no" | "maybe";

// Options the same program reads as one, named by their short form (per git sub-command for
// git). A long option also counts by any prefix that names only it among the table's options,
// as getopt and git's parse-options read them (`rm --recur`).
const SAME: Record<string, Record<string, string[]>> = {
  // `--interactive=never` (or `no`, `none`, or an abbreviation of them) never asks, as `-f`.
  rm: {
    "-R": ["-r"],
    "--recursive": ["-r"],
    "--force": ["-f"],
    "--dir": ["-d"],
    "--interactive=never": ["-f"],
    "--interactive=no": ["-f"],
    "--interactive=none": ["-f"],
  },
  cp: { "-R": ["-r"], "--recursive": ["-r"], "--force": ["-f"] },
  mv: { "--force": ["-f"] },
  ln: { "--force": ["-f"], "--symbolic": ["-s"] },
  chmod: { "--recursive": ["-R"] },
  chown: { "--recursive": ["-R"] },
  chgrp: { "--recursive": ["-R"] },
  sed: { "--in-place": ["-i"] },
  curl: { "--insecure": ["-k"], "--output": ["-o"], "--request": ["-X"], "--data": ["-d"], "--upload-file": ["-T"] },
  npm: { "--global": ["-g"], "--force": ["-f"] },
  pip: { "--upgrade": ["-U"] },
  pip3: { "--upgrade": ["-U"] },
  docker: { "--force": ["-f"] },
  kubectl: { "--all-namespaces": ["-A"] },
  // `--mirror` force-updates and deletes remote refs to match local ones; `--prune` deletes.
  "git push": {
    "--force": ["-f"],
    "--force-with-lease": ["-f"],
    "--delete": ["-d"],
    "--mirror": ["-f", "-d"],
    "--prune": ["-d"],
    "--set-upstream": ["-u"],
  },
  "git clean": { "--force": ["-f"] },
  "git branch": { "-D": ["-d", "-f"], "--delete": ["-d"], "--force": ["-f"] },
  "git checkout": { "--force": ["-f"] },
  "git commit": { "--no-verify": ["-n"], "--all": ["-a"] },
  "git reset": {},
};

/** The option table for a command: its program's, and for git that of each word that names a sub-command. */
function optionTable(program: string, words: readonly string[]): Record<string, string[]> {
  const table = { ...SAME[program] };
  if (program === "git") for (const w of words) Object.assign(table, SAME[`git ${w}`]);
  return table;
}

/** A flag in its short form where the table knows one: `--rec=x` → `-r`, `-R` → `-r` (rm). */
function canonicalFlags(flag: string, table: Record<string, string[]>): string[] {
  const name = flag.startsWith("--") ? flag.replace(/=.*$/s, "") : flag;
  if (table[name]) return table[name];
  // An entry with a value (`--interactive=never`): the option by any prefix, the value by any
  // prefix the program's argmatch accepts, as long as every entry it could be says the same.
  const eq = flag.indexOf("=");
  if (name.startsWith("--") && name.length >= 3 && eq > 0 && eq < flag.length - 1) {
    const value = flag.slice(eq + 1);
    const hits = Object.keys(table).filter((k) => {
      const at = k.indexOf("=");
      return at > 0 && k.slice(0, at).startsWith(name) && k.slice(at + 1).startsWith(value);
    });
    if (hits.length > 0 && hits.every((h) => table[h].join() === table[hits[0]].join())) return table[hits[0]];
  }
  if (name.startsWith("--") && name.length >= 3) {
    const hits = Object.keys(table).filter((k) => !k.includes("=") && k.startsWith(name));
    if (hits.length === 1 || (hits.length > 1 && hits.every((h) => table[h].join() === table[hits[0]].join())))
      return table[hits[0]];
  }
  return [name];
}

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
  // Loose: a case-insensitive file system runs `CURL` as curl.
  const program = basename(prefix[0]);
  const same = mode === "loose" ? program.toLowerCase() === command.argv[0].toLowerCase() : program === command.argv[0];
  if (!same) return unseen ? "maybe" : "no";
  const args = command.words.slice(1);
  const dynamic = args.some((w) => w.dynamic);
  const fixed = args.filter((w) => !w.dynamic).map((w) => w.text);
  const wanted = prefix.slice(1);
  const words = wanted.filter((w) => !w.startsWith("-"));
  let cmdWords = fixed.filter((w) => !w.startsWith("-"));
  // A deny of `npm publish` holds for `npm pub`, which npm runs as publish (npm-commands.ts).
  if (program === "npm" && mode === "loose") cmdWords = cmdWords.map((w) => npmCommand(w) ?? w);
  // `git send-pack` is the push beneath `git push`, with the same `--force` and `+ref`.
  if (program === "git" && mode === "loose") cmdWords = cmdWords.map((w) => (w === "send-pack" ? "push" : w));
  const table = optionTable(program, cmdWords);
  const flags = wanted
    .filter((w) => w.startsWith("-"))
    .flatMap(expandFlags)
    .flatMap((f) => canonicalFlags(f, table));
  const cmdFlags = new Set(
    fixed
      .filter((w) => w.startsWith("-"))
      .flatMap(expandFlags)
      .flatMap((f) => canonicalFlags(f, table)),
  );
  // `git push origin +main` force-pushes main as `--force` would; `git push origin :main` (or
  // `+:main`) deletes main as `--delete main` would (`:` alone pushes matching branches).
  if (program === "git" && cmdWords.includes("push")) {
    if (cmdWords.some((w) => w.startsWith("+"))) cmdFlags.add("-f");
    if (cmdWords.some((w) => /^\+?:./s.test(w))) cmdFlags.add("-d");
  }
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
  if (mode === "loose" && program === "git" && words.length > 0 && mayBeGitAlias(command.argv)) return "maybe";
  if (mode === "loose" && program === "git" && pushByConfig(words, flags, cmdWords)) return "maybe";
  return dynamic || unseen ? "maybe" : "no";
}

/**
 * Whether a rule on a forced or deleting push may hold for a `git push` that names no refspec:
 * git then pushes what the repository's configuration says (`remote.origin.push = +refs/…`,
 * `remote.origin.mirror = true`), which a write or a `git config` earlier may have set.
 */
export function pushByConfig(words: string[], flags: string[], cmdWords: string[]): boolean {
  if (words.join(" ") !== "push" || !flags.some((f) => f === "-f" || f === "-d")) return false;
  const at = cmdWords.indexOf("push");
  return at >= 0 && cmdWords.length - at - 1 <= 1;
}

/** Why a git command only maybe matches a rule on git: for the person's card. */
export function gitMaybeWhy(command: SimpleCommand, prefix: string[]): string | undefined {
  if (command.argv[0] !== "git" || basename(prefix[0]) !== "git") return undefined;
  const words = command.words.slice(1).filter((w) => !w.dynamic && !w.text.startsWith("-"));
  const cmdWords = words.map((w) => (w.text === "send-pack" ? "push" : w.text));
  const wanted = prefix.slice(1);
  const flags = wanted.filter((w) => w.startsWith("-")).flatMap(expandFlags);
  const table = optionTable("git", ["push"]);
  const canonical = flags.flatMap((f) => canonicalFlags(f, table));
  if (
    pushByConfig(
      wanted.filter((w) => !w.startsWith("-")),
      canonical,
      cmdWords,
    )
  )
    return "a push that names no refspec pushes what the repository's configuration says, which may force or delete";
  if (mayBeGitAlias(command.argv)) return "its sub-command may be an alias the repository's configuration defines";
  return undefined;
}

/** Whether a git command's sub-command may be an alias (not one of git's own), or cannot be told. */
function mayBeGitAlias(argv: readonly string[]): boolean {
  const named = subcommandWords(argv, () => 2);
  if (!named) return true; // an option before it that the table does not know
  return named.length > 1 && !GIT_COMMANDS.has(named[1]);
}

const SETS_FROM_INPUT = new Set(["read", "mapfile", "readarray"]);

/**
 * Do the command's own arguments name the rule's program and then its sub-command words, for
 * it to run (`tar --to-command=curl`, `rsync -e curl`, `vim -c '!curl x'`, `npx curl`,
 * `git config alias.p '!git push'`)? Each argument is split into the words it could hold.
 */
export function mentions(command: SimpleCommand, prefix: string[]): boolean {
  if (prefix.length === 0) return false;
  const wanted = [basename(prefix[0]), ...prefix.slice(1).filter((w) => !w.startsWith("-"))].map((w) =>
    w.toLowerCase(),
  );
  // A here-string's text too: `read x <<< 'a[$(rm -rf z)]'` makes x text that an arithmetic
  // context (`${y:x}`, `$((x))`) later runs as a command substitution.
  const here = command.source.indexOf("<<<");
  const texts = command.words
    .slice(1)
    .filter((w) => !w.dynamic)
    .map((w) => w.text);
  if (here >= 0 && SETS_FROM_INPUT.has(command.argv[0])) texts.push(command.source.slice(here + 3));
  const tokens = texts
    .flatMap((t) => t.split(/[\s=!'"`;|&()<>{},:@+[\]$]+/))
    .filter(Boolean)
    .map((t) => basename(t).toLowerCase());
  let at = 0;
  for (const t of tokens) if (at < wanted.length && t === wanted[at]) at++;
  return at === wanted.length;
}

/** Boolean form, for callers that only accept a definite match. */
export function matchesPrefix(command: SimpleCommand, prefix: string[], mode: "strict" | "loose" = "strict"): boolean {
  return matchPrefix(command, prefix, mode) === "yes";
}

/** The simple commands of `line` (see server/shell/analyse.ts). */
export function commandsOf(line: string): readonly SimpleCommand[] {
  return analyseShell(line).commands;
}
