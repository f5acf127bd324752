// What a terminal's line discipline would do with an interrupt key typed behind queued input.
// The kernel's tty turns ^C (VINTR), ^\ (VQUIT) and ^Z (VSUSP) into a signal for the foreground
// process group and flushes the pending input, but only in ISIG mode and only once the key gets
// into the tty: behind a paste into a program that does not read, it never would. pty-input.ts
// asks here whether the terminal is in ISIG mode (and has the key's signal bound to that byte),
// which also flushes the tty's pending input when it is, as the line discipline would; and which
// process group to signal when even the key cannot be written.
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";

/** The interrupt keys by their default byte, with the termios slot and the signal they stand for. */
export const INTERRUPT_KEYS: ReadonlyMap<number, { cc: "intr" | "quit" | "susp"; signal: NodeJS.Signals }> = new Map([
  [0x03, { cc: "intr", signal: "SIGINT" }],
  [0x1c, { cc: "quit", signal: "SIGQUIT" }],
  [0x1a, { cc: "susp", signal: "SIGTSTP" }],
]);

/** Index of the first interrupt key in `bytes`, or -1. */
export function interruptAt(bytes: Buffer): number {
  for (let i = 0; i < bytes.length; i++) if (INTERRUPT_KEYS.has(bytes[i])) return i;
  return -1;
}

/**
 * "signal": the terminal turns `key` into its signal (ISIG, and the byte is that key's character):
 * its pending input has just been flushed. "byte": the program reads the key as a byte (raw mode,
 * vim, less). "unknown": it could not be told (no perl, no tty path).
 */
export type KeyMeaning = "signal" | "byte" | "unknown";

// POSIX's termios through perl (Node has no tcgetattr/tcflush). Opened without becoming its
// controlling terminal and without blocking; prints "isig intr quit susp" or "raw".
const SCRIPT = String.raw`
use POSIX;
sysopen(my $f, $ARGV[0], O_RDWR | O_NOCTTY | O_NONBLOCK) or exit 2;
my $t = POSIX::Termios->new;
defined $t->getattr(fileno $f) or exit 2;
if (!($t->getlflag & ISIG)) { print "raw\n"; exit 0; }
my @cc = map { $t->getcc($_) } (VINTR, VQUIT, VSUSP);
my %slot = (intr => $cc[0], quit => $cc[1], susp => $cc[2]);
if ($slot{$ARGV[1]} == $ARGV[2]) { POSIX::tcflush(fileno $f, TCIFLUSH); }
print "isig @cc\n";
`;

/** What `key` typed into the terminal at `tty` (its /dev/pts path) means now; flushes its input if a signal. */
export function keyMeaning(tty: string | undefined, key: number): Promise<KeyMeaning> {
  const slot = INTERRUPT_KEYS.get(key);
  if (!tty || !slot) return Promise.resolve("unknown");
  return new Promise((resolve) => {
    execFile("perl", ["-e", SCRIPT, tty, slot.cc, String(key)], { timeout: 2_000 }, (err, stdout) => {
      const words = String(stdout).trim().split(/\s+/);
      if (err || (words[0] !== "raw" && words[0] !== "isig")) return resolve("unknown");
      if (words[0] === "raw") return resolve("byte");
      const bound = Number(words[1 + ["intr", "quit", "susp"].indexOf(slot.cc)]);
      resolve(bound === key ? "signal" : "byte");
    });
  });
}

/**
 * The terminal's foreground process group, from its session leader's /proc stat (field 8,
 * tpgid, in this process's PID namespace), or undefined.
 */
export async function foregroundGroup(leader: number): Promise<number | undefined> {
  const stat = await readFile(`/proc/${leader}/stat`, "utf8").catch(() => "");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const tpgid = Number(fields[5]);
  // The leader's own group is not a job of the shell (it would end the terminal).
  return Number.isInteger(tpgid) && tpgid > 1 && tpgid !== leader ? tpgid : undefined;
}
