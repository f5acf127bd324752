// What the shell analysis says about a command line: every simple command it would run, each
// with its words as bash would pass them when they are static, and what it could not see through.

/** One word of a command: its value when static, else its source text. */
export interface Word {
  text: string;
  /** Its value is only known at run time: expansion, substitution, glob, tilde, braces. */
  dynamic: boolean;
  /** Dynamic only through filename globbing (`*.ts`): no variable, no substitution. */
  globOnly?: boolean;
}

export interface SimpleCommand {
  /** Program (basename when it was a path) and arguments; an assignment-only statement has none. */
  argv: string[];
  /** The words behind argv, same order, for what a static argv cannot say. */
  words: Word[];
  /** The program was named by a path (`./git`, `/usr/bin/git`). */
  programPath: boolean;
  /** `NAME=value` prefixes (or the whole statement, when argv is empty). */
  assignments: string[];
  /** The command's source text, as written. */
  source: string;
  /** Set when the analysis cannot tell what this command runs: the reason, for a card. */
  opaque?: string;
  /** Set when it runs code given inline (`python3 -c`, `awk '…'`, `sed 'e …'`): a rule on any
   *  other program could match what that code does. */
  runsCode?: string;
  /** Reached by unwrapping another command (`env X`, `sh -c '…'`, `find -exec`). */
  wrappedBy?: string;
  /** Offsets of each word in the analysed line, for a rewrite (commands of the line itself only). */
  ranges?: { start: number; end: number }[];
}

export interface ShellAnalysis {
  commands: SimpleCommand[];
  /** Output redirected somewhere other than /dev/null or another descriptor. */
  writes: boolean;
  /** Where output is redirected to (static names, or the source text of a dynamic one). */
  writeTargets: Word[];
  /** Files redirected into a command's input (`< file`). */
  readTargets: Word[];
  /** Something is started in the background (`&`) and may outlive the line. */
  background: boolean;
}
