// Splits a shell command line into the simple commands it would run, so policy rules and
// session approvals judge each one: `git add . && git push` is two commands, and wrappers
// (`bash -c`, `env`, `xargs`, `sudo`, `timeout`, ...) are looked through to the command they run.
// Parsing is shell-quote's; what is ours is the wrapper table and substitution extraction.
import { parse, type ParseEntry } from "shell-quote";

/** One command as it would be executed: argv with argv[0] reduced to its basename. */
export type SimpleCommand = string[];

const SEPARATORS = new Set(["||", "&&", ";;", "|&", "&", ";", "|", "(", ")", "<("]);
const REDIRECTS = new Set([">", ">>", "<", ">&"]);
const MAX_DEPTH = 8;

// Wrappers that run their remaining arguments as a command. The value lists options that take
// a separate argument, so `timeout -s KILL 5 rm x` skips `KILL` and then the duration.
const WRAPPERS: Record<string, { argOptions: string[]; leadingOperands?: number }> = {
  env: { argOptions: ["-u", "--unset", "-C", "--chdir", "-S", "--split-string"] },
  sudo: { argOptions: ["-u", "-g", "-h", "-p", "-C", "-D", "-U", "-r", "-t", "-T"] },
  doas: { argOptions: ["-u", "-C"] },
  xargs: { argOptions: ["-n", "-L", "-P", "-I", "-d", "-E", "-s", "-a", "--max-args", "--max-procs", "--delimiter"] },
  nice: { argOptions: ["-n", "--adjustment"] },
  nohup: { argOptions: [] },
  time: { argOptions: ["-f", "-o"] },
  command: { argOptions: [] },
  exec: { argOptions: ["-a"] },
  builtin: { argOptions: [] },
  stdbuf: { argOptions: ["-i", "-o", "-e"] },
  timeout: { argOptions: ["-s", "--signal", "-k", "--kill-after"], leadingOperands: 1 },
  chroot: { argOptions: ["--userspec", "--groups"], leadingOperands: 1 },
  ionice: { argOptions: ["-c", "-n", "-p"] },
  watch: { argOptions: ["-n", "-d"] },
};
const SHELLS = new Set(["sh", "bash", "zsh", "dash", "ksh", "fish"]);

export function basename(program: string): string {
  const i = program.lastIndexOf("/");
  return i >= 0 ? program.slice(i + 1) : program;
}

/** Every simple command in `line`, wrappers unwrapped, substitutions included. */
export function splitCommands(line: string, depth = 0): SimpleCommand[] {
  if (depth > MAX_DEPTH) return [[line]];
  let entries: ParseEntry[];
  try {
    // Variables stay literal: `$HOME` must not vanish into "" and hide an argument.
    entries = parse(line, (name: string) => `$${name}`) as ParseEntry[];
  } catch {
    return [line.trim().split(/\s+/).filter(Boolean)];
  }
  const out: SimpleCommand[] = [];
  let current: string[] = [];
  let skipNext = false;
  const flush = () => {
    if (current.length > 0) out.push(...unwrap(current, depth));
    current = [];
  };
  for (const e of entries) {
    if (typeof e === "string") {
      for (const inner of substitutions(e)) out.push(...splitCommands(inner, depth + 1));
      if (skipNext) {
        skipNext = false;
        continue;
      }
      current.push(e);
    } else if ("op" in e) {
      if (e.op === "glob") current.push(e.pattern);
      else if (REDIRECTS.has(e.op)) skipNext = true;
      else if (SEPARATORS.has(e.op)) flush();
    }
    // comments are dropped
  }
  flush();
  return out;
}

// `$(...)` and backtick bodies inside a word run as commands of their own.
function substitutions(word: string): string[] {
  const found: string[] = [];
  for (const m of word.matchAll(/`([^`]*)`/g)) found.push(m[1]);
  let i = word.indexOf("$(");
  while (i >= 0) {
    let depth = 0;
    let j = i + 1;
    for (; j < word.length; j++) {
      if (word[j] === "(") depth++;
      else if (word[j] === ")" && --depth === 0) break;
    }
    found.push(word.slice(i + 2, j));
    i = word.indexOf("$(", j);
  }
  return found.filter((s) => s.trim().length > 0);
}

function isAssignment(word: string): boolean {
  return /^[A-Za-z_][A-Za-z0-9_]*=/.test(word);
}

function unwrap(argv: string[], depth: number): SimpleCommand[] {
  let words = argv;
  while (words.length > 0 && isAssignment(words[0])) words = words.slice(1);
  if (words.length === 0) return [];
  const program = basename(words[0]);
  const rest = words.slice(1);
  // A wrapper is judged itself (a rule may deny `sudo`) and so is what it runs.
  if (SHELLS.has(program)) {
    const c = rest.findIndex((w) => /^-[a-zA-Z]*c[a-zA-Z]*$/.test(w));
    if (c >= 0 && rest[c + 1] !== undefined) return [[program, ...rest], ...splitCommands(rest[c + 1], depth + 1)];
    return [[program, ...rest]];
  }
  const wrapper = WRAPPERS[program];
  if (!wrapper) return [[program, ...rest]];
  let i = 0;
  let operands = wrapper.leadingOperands ?? 0;
  while (i < rest.length) {
    const w = rest[i];
    if (w === "--") {
      i++;
      break;
    }
    if (w.startsWith("-") && w.length > 1) {
      i += wrapper.argOptions.includes(w) ? 2 : 1;
      continue;
    }
    if (program === "env" && isAssignment(w)) {
      i++;
      continue;
    }
    if (operands > 0) {
      operands--;
      i++;
      continue;
    }
    break;
  }
  const inner = rest.slice(i);
  // A wrapper with nothing to run is itself the command (`env` prints the environment).
  if (inner.length === 0 || depth > MAX_DEPTH) return [[program, ...rest]];
  return [[program, ...rest], ...unwrap(inner, depth + 1)];
}

/** Splits a flag cluster into single flags: `-rf` → `-r`, `-f`; long flags stay whole. */
export function expandFlags(word: string): string[] {
  if (/^-[a-zA-Z]{2,}$/.test(word)) return [...word.slice(1)].map((c) => `-${c}`);
  return [word];
}

/**
 * Does `command` start with `prefix` (words of a rule like `git push` or `rm -rf`)? Words match
 * in order; flags in the prefix must each appear among the command's flags in any order or
 * cluster, so `rm -rf` also matches `rm -r -f x` and `rm -fr x`.
 */
/**
 * `strict` (allow rules): the rule's words lead the command's words. `loose` (ask and deny
 * rules): they appear in order anywhere after the program, so global options placed before a
 * sub-command (`git -C dir push`, `npm --prefix x publish`) cannot slip past a deny.
 */
export function matchesPrefix(command: SimpleCommand, prefix: string[], mode: "strict" | "loose" = "strict"): boolean {
  if (prefix.length === 0 || command.length === 0) return false;
  if (basename(prefix[0]) !== command[0]) return false;
  const wanted = prefix.slice(1);
  const words = wanted.filter((w) => !w.startsWith("-"));
  const flags = wanted.filter((w) => w.startsWith("-")).flatMap(expandFlags);
  const cmdWords = command.slice(1).filter((w) => !w.startsWith("-"));
  const cmdFlags = new Set(command.slice(1).filter((w) => w.startsWith("-")).flatMap(expandFlags));
  if (mode === "strict") {
    for (let i = 0; i < words.length; i++) if (cmdWords[i] !== words[i]) return false;
  } else {
    let at = 0;
    for (const w of cmdWords) if (at < words.length && w === words[at]) at++;
    if (at < words.length) return false;
  }
  return flags.every((f) => cmdFlags.has(f));
}
