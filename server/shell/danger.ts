// Which command lines are dangerous enough to be asked about every time, whatever was approved
// before (`rm -rf`, `git push --force`, `sudo`, a download piped into a shell), and why, in
// words a person reads on the approval card. Part of the shell analysis, not of the shell tool:
// the session approvals (policy/fingerprint.ts) judge each simple command with it, the tool
// and the card judge the line. Besides the analysis's commands, a few patterns are scanned on
// the raw text: a pipe from a download into an interpreter and a fork bomb are shapes across
// commands, and a dangerous word the analysis cannot see into (an `eval` string, inline code)
// still makes the line dangerous; over-asking is the safe side of that scan.
import { analyseShell, type SimpleCommand } from "./analyse";

type Args = readonly string[];

// Why one simple command is dangerous, in words a person reads on the approval card; undefined
// when it is not.
function dangerousCommand([name, ...args]: Args): string | undefined {
  const flags = args.filter((a) => a.startsWith("-")).join(" ");
  switch (name) {
    case "rm":
      return /(^|\s)-[a-zA-Z]*[rRf]|--recursive|--force/.test(flags)
        ? "deletes files and folders without asking, and cannot be undone"
        : undefined;
    case "sudo":
    case "su":
    case "doas":
      return "runs a command with administrator rights";
    case "dd":
    case "shred":
    case "wipefs":
    case "fdisk":
    case "parted":
    case "mkswap":
      return "writes raw data to a disk or file, and can destroy it";
    case "shutdown":
    case "reboot":
    case "halt":
    case "poweroff":
      return "shuts down or restarts the machine";
    case "killall":
    case "pkill":
      return "stops every process matching a name";
    case "chmod":
    case "chown":
    case "chgrp":
      return /(^|\s)-[a-zA-Z]*R|--recursive/.test(flags) || args.includes("/")
        ? "changes permissions or owners of a whole folder tree"
        : undefined;
    case "kill":
      return args.includes("-1") ? "stops every process you own" : undefined;
    case "git": {
      const sub = args.find((a) => !a.startsWith("-"));
      if (
        sub === "push" &&
        (/(^|\s)(-f|--force|--force-with-lease|--mirror|--delete|--prune)/.test(flags) ||
          args.some((a) => a.startsWith("+") || a.startsWith(":")))
      ) {
        return "force-pushes or deletes on the remote, which can erase other people's commits";
      }
      if (sub === "reset" && args.includes("--hard")) return "throws away uncommitted changes";
      if (sub === "clean" && /(^|\s)-[a-zA-Z]*f|--force/.test(flags)) return "deletes untracked files";
      if (sub === "branch" && /(^|\s)-D\b/.test(flags)) return "deletes a branch even if it is not merged";
      return undefined;
    }
    default:
      return /^mkfs(\.|$)/.test(name) ? "formats a disk, erasing everything on it" : undefined;
  }
}

// Also scanned on the raw text: a download piped into an interpreter, a fork bomb, a disk.
const RAW_DANGER: [RegExp, string][] = [
  [
    /\b(curl|wget|fetch)\b[^|;&]*\|\s*(sudo\s+)?((ba|z|da|k|fi)?sh|python[0-9.]*|perl|ruby|node|php)\b/,
    "runs a script downloaded from the internet",
  ],
  [/\brm\s+(-[a-zA-Z]*\s+)*-[a-zA-Z]*[rRf]/, "deletes files and folders without asking, and cannot be undone"],
  [/\brm\s+.*--(recursive|force)\b/, "deletes files and folders without asking, and cannot be undone"],
  [/:\(\)\s*\{\s*:\|:&\s*\}\s*;\s*:/, "starts processes without end until the machine stops answering"], // fork bomb
  [/>\s*\/dev\/(sd|nvme|hd|vd|xvd|mmcblk)/, "writes raw data to a disk or file, and can destroy it"],
  [/\bsudo\b/, "runs a command with administrator rights"],
  [/\bmkfs(\.\w+)?\b/, "formats a disk, erasing everything on it"],
];

/** One simple command that must always be asked about (`rm -rf`, `git push --force`, `sudo`). */
export function isDangerous(c: SimpleCommand): boolean {
  return c.argv.length > 0 && dangerousCommand(c.argv) !== undefined;
}

/** Why a line must always be asked about (what it could destroy, in plain words); undefined when it need not be. */
export function dangerReason(line: string): string | undefined {
  for (const [re, why] of RAW_DANGER) if (re.test(line)) return why;
  for (const c of analyseShell(line).commands) {
    const why = c.argv.length > 0 ? dangerousCommand(c.argv) : undefined;
    if (why) return why;
  }
  return undefined;
}

/** True for lines that must always be asked about, whatever was approved before. */
export function isDangerousCommand(line: string): boolean {
  return dangerReason(line) !== undefined;
}
