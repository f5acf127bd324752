// What the shell analysis says about a command line: every simple command it would run, each
// with its words as bash would pass them when they are static, and what it could not see through.
// Read-only: one answer is shared by every consumer of a line (memo.ts), and frozen at run time.

/** One word of a command: its value when static, else its source text. */
export interface Word {
  readonly text: string;
  /** Its value is only known at run time: expansion, substitution, glob, tilde, braces. */
  readonly dynamic: boolean;
  /** Dynamic only through filename globbing (`*.ts`): no variable, no substitution. */
  readonly globOnly?: boolean;
  /** Dynamic, yet always exactly one word (`"$X"`): bash neither drops nor splits it. */
  readonly oneWord?: boolean;
}

export interface SimpleCommand {
  /** Program (basename when it was a path) and arguments; an assignment-only statement has none. */
  readonly argv: readonly string[];
  /** The words behind argv, same order, for what a static argv cannot say. */
  readonly words: readonly Word[];
  /** The program was named by a path (`./git`, `/usr/bin/git`). */
  readonly programPath: boolean;
  /** `NAME=value` prefixes (or the whole statement, when argv is empty). */
  readonly assignments: readonly string[];
  /** The command's source text, as written. */
  readonly source: string;
  /** Set when the analysis cannot tell what this command runs: the reason, for a card. */
  readonly opaque?: string;
  /** Set when it runs code given inline (`python3 -c`, `awk '…'`, `sed 'e …'`): a rule on any
   *  other program could match what that code does. */
  readonly runsCode?: string;
  /** Reached by unwrapping another command (`env X`, `sh -c '…'`, `find -exec`). */
  readonly wrappedBy?: string;
  /** Offsets of each word in the analysed line, for a rewrite (commands of the line itself only). */
  readonly ranges?: readonly { readonly start: number; readonly end: number }[];
  /** What it reads on stdin, when the line shows it (a here-document, `echo … |`): a client
   *  that takes commands there (`ftp <<EOF open host`) connects where they say. Inexact: bash's
   *  template of text only known at run time. */
  readonly stdin?: { readonly text: string; readonly exact: boolean };
}

export interface ShellAnalysis {
  readonly commands: readonly SimpleCommand[];
  /** Output redirected somewhere other than /dev/null or another descriptor. */
  readonly writes: boolean;
  /** Where output is redirected to (static names, or the source text of a dynamic one). */
  readonly writeTargets: readonly Word[];
  /** Files redirected into a command's input (`< file`). */
  readonly readTargets: readonly Word[];
  /** Something is started in the background (`&`) and may outlive the line. */
  readonly background: boolean;
  /** Text the line hands a shell to run (`sh -c '…'`, `eval`, `watch`, a here-document fed to
   *  `bash`), nested ones too: for what the commands' words do not show (a network redirect). */
  readonly scripts: readonly string[];
}
