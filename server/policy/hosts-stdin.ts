// Where a client that takes its commands on stdin connects when the line shows that text
// (`ftp -n <<EOF⏎open evil.com⏎EOF`, `echo 'open evil.com' | telnet`, `lftp <<< 'get
// http://evil.com/x'`, `sftp -b - x <<< '!curl evil.com'`): an `open` names the host, a URL is
// fetched, and a `!command` line runs in a local shell, read as the script it is. telnet takes
// commands only with no host given (else its stdin is the connection's data). Text only known
// at run time may say anything: that is no certain host, and stays a question.
import type { SimpleCommand } from "../shell/types";
import { opened } from "./hosts-netcat";
import type { Nested, Reach } from "./hosts-reach";

const URL_IN_TEXT = /[a-z][a-z0-9+.-]*:\/\/[^\s'"`<>]+/gi;

// Clients whose stdin is a command script, and whether `open` there connects.
const SCRIPTED: Record<string, { opens: boolean }> = {
  telnet: { opens: true },
  ftp: { opens: true },
  tnftp: { opens: true },
  pftp: { opens: true },
  lftp: { opens: true },
  sftp: { opens: false },
};

// ftp and telnet take a command by any unambiguous prefix in any case (`o`, `OP`), and ftp's
// `proxy` runs one on a second connection (`proxy open evil.com`): each is spelled `open` here.
function commandLines(text: string): string {
  return text
    .split(/\r?\n/)
    .map((line) => {
      const words = line
        .trim()
        .replace(/^proxy\s+/i, "")
        .split(/\s+/);
      if (words[0] && "open".startsWith(words[0].toLowerCase())) words[0] = "open";
      return words.join(" ");
    })
    .join("\n");
}

/** The hosts the commands `cmd` reads on stdin make it reach, or undefined for no such client. */
export function stdinScriptReach(cmd: SimpleCommand, nested: Nested): Reach | undefined {
  const program = cmd.argv[0]?.toLowerCase() ?? "";
  const client = Object.hasOwn(SCRIPTED, program) ? SCRIPTED[program] : undefined;
  if (!client || !cmd.stdin) return undefined;
  // telnet with a host sends what it reads to that host.
  if (program === "telnet" && cmd.argv.slice(1).some((a) => !a.startsWith("-"))) return undefined;
  const text = cmd.stdin.text;
  const out: Reach = { urls: [] };
  if (client.opens) out.urls.push(...opened(commandLines(text)));
  if (program !== "telnet") out.urls.push(...[...text.matchAll(URL_IN_TEXT)].map((m) => m[0]));
  // `!command` (and lftp's `shell command`): a local shell runs the rest of the line.
  for (const line of text.split(/\r?\n/)) {
    const m = /^\s*(?:!|shell\s)(.*)$/s.exec(line);
    if (!m || !m[1].trim()) continue;
    const r = nested(m[1]);
    out.urls.push(...r.urls);
    out.unsure ??= r.unsure && `a command its input runs: ${r.unsure}`;
  }
  if (!cmd.stdin.exact) out.unsure ??= "it reads commands from input only known at run time";
  return out;
}
