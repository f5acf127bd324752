// The hosts a network client on the line reaches for certain, read as the client reads its own
// arguments: every operand of curl and wget is a URL, with a scheme or without (`curl evil.com`
// fetches http://evil.com/), and so are the values of options that name where to connect
// (`--url`, `-x`, `--resolve`, wget's `-e http_proxy=…`); ssh, scp, sftp and rsync
// (hosts-ssh.ts), git (hosts-git.ts) and the raw-socket clients (nc, socat, telnet, openssl:
// hosts-netcat.ts) are read by modules of their own, the commands a client reads on stdin
// (`ftp <<EOF⏎open evil.com`) by hosts-stdin.ts, and the environment a
// line sets (`ALL_PROXY=…`, `GIT_SSH_COMMAND=…`) by hosts-env.ts. A command string a client
// runs (ssh's `ProxyCommand`, rsync's `-e`, an `ext::` URL) is analysed as a script and what its
// commands reach counts too. These are the call's hosts as a URL's are: a deny rule on the host
// denies the line, not just asks about it. Options are read with each client's own table (the
// shared getopt), up to the first word only known at run time; a line the table cannot read
// gives nothing more here and stays a question (hosts.ts).
import { analyseShell } from "../shell/analyse";
import type { SimpleCommand } from "../shell/types";
import { expandCurlGlob, hasCurlGlob } from "./curl-glob";
import { CURL, WGET } from "./client-options";
import { envReach } from "./hosts-env";
import { gitReach } from "./hosts-git";
import { rsyncReach, scpReach, sshReach } from "./hosts-ssh";
import { socketClientReach } from "./hosts-netcat";
import { stdinScriptReach } from "./hosts-stdin";
import { asUrl, certainPermuted, resolveTo, staticTexts, valuesOf, type Reach } from "./hosts-reach";

// Values that are where curl connects: a URL, or a proxy's `[scheme://]host[:port]`.
const CURL_DESTINATIONS = new Set([
  "--url",
  "-x",
  "--proxy",
  "--preproxy",
  "--doh-url",
  "--socks4",
  "--socks4a",
  "--socks5",
  "--socks5-hostname",
  "--proxy1.0",
]);
// Options by which curl connects to a local socket instead of the URL's host, or wget runs a
// program of the line's choosing: the URL is then not all the call reaches.
const ELSEWHERE = new Map([
  ["--unix-socket", "it connects to a local socket instead of the URL's host (`--unix-socket`)"],
  ["--abstract-unix-socket", "it connects to a local socket instead of the URL's host (`--abstract-unix-socket`)"],
  ["--use-askpass", "it runs the program `--use-askpass` names"],
]);

const URL_IN_WORD = /[a-z][a-z0-9+.-]*:\/\/[^\s'"`<>]+/gi;

/** The URLs one simple command reaches: those its words spell with a scheme (`--url=https://…`,
 *  `-Lhttps://…`), and where a client connects though no scheme says so. */
export function reachedUrls(cmd: SimpleCommand): string[] {
  return reach(cmd, 0).urls;
}

/** URLs `cmd` certainly connects to, beyond those spelled with a scheme in its words. */
export function clientUrls(cmd: SimpleCommand): string[] {
  return clientReach(cmd, 0).urls;
}

/** Why the hosts `cmd` reaches cannot all be listed, though its words are known. */
export function clientUnsure(cmd: SimpleCommand): string | undefined {
  return clientReach(cmd, 0).unsure;
}

function reach(cmd: SimpleCommand, depth: number): Reach {
  const urls = cmd.words.flatMap((w) => [...w.text.matchAll(URL_IN_WORD)].map((m) => m[0]));
  const r = clientReach(cmd, depth);
  return { urls: [...urls, ...r.urls], unsure: r.unsure };
}

// A command string a client runs, analysed as the script it is. ssh is opaque to the analysis
// for the command it runs remotely, which says nothing of where it connects: its reader says
// that, and what it cannot read (hosts-ssh.ts).
function nested(text: string, depth: number): Reach {
  if (depth > 3) return { urls: [], unsure: "runs command strings nested too deep to read" };
  const urls: string[] = [];
  let unsure: string | undefined;
  for (const c of analyseShell(text).commands) {
    const r = reach(c, depth + 1);
    urls.push(...r.urls);
    unsure ??= r.unsure ?? (c.argv[0] === "ssh" ? undefined : c.opaque) ?? c.runsCode;
  }
  return { urls, unsure };
}

function clientReach(cmd: SimpleCommand, depth: number): Reach {
  const inner = (text: string) => nested(text, depth);
  const own = programReach(cmd, inner);
  const env = envReach(cmd, inner);
  return { urls: [...own.urls, ...env.urls], unsure: own.unsure ?? env.unsure };
}

function programReach(cmd: SimpleCommand, inner: (text: string) => Reach): Reach {
  const own = argumentReach(cmd, inner);
  const fed = stdinScriptReach(cmd, inner);
  return fed ? { urls: [...own.urls, ...fed.urls], unsure: own.unsure ?? fed.unsure } : own;
}

function argumentReach(cmd: SimpleCommand, inner: (text: string) => Reach): Reach {
  const [program] = cmd.argv;
  if (program === "curl" || program === "wget") return curlReach(cmd);
  if (program === "git") return gitReach(cmd, inner);
  if (program === "ssh") return sshReach(cmd, inner);
  if (program === "scp" || program === "sftp") return scpReach(cmd, inner);
  if (program === "rsync") return rsyncReach(cmd, inner);
  return socketClientReach(cmd, inner) ?? { urls: [] };
}

// wget's `-e COMMAND` is a wgetrc line; its names ignore case, `-` and `_` (`HTTP-PROXY = x`).
function wgetProxies(commands: readonly string[]): string[] {
  return commands.flatMap((c) => {
    const m = /^\s*([\w-]+)\s*=\s*(.*?)\s*$/s.exec(c);
    return m && /^(https?|ftp)proxy$/.test(m[1].toLowerCase().replace(/[-_]/g, "")) && m[2] ? [asUrl(m[2])] : [];
  });
}

function curlReach(cmd: SimpleCommand): Reach {
  const program = cmd.argv[0];
  const args = cmd.words.slice(1);
  // curl's `-:` is `--next` (more URLs follow), a letter the optstring cannot spell.
  const spelled = program === "curl" ? args.map((w) => (w.text === "-:" ? { ...w, text: "--next" } : w)) : args;
  const parsed = certainPermuted(spelled, program === "curl" ? CURL : WGET);
  if (!parsed.ok) return { urls: [] };
  const elsewhere = parsed.options.find((o) => ELSEWHERE.has(o.name));
  if (elsewhere) return { urls: [], unsure: ELSEWHERE.get(elsewhere.name) };
  // A word only known at run time may be an option that sends it elsewhere (`--unix-socket=…`):
  // what stands before it is reached all the same, but it is not all the call reaches.
  const unsure = parsed.partial
    ? "a word only known at run time may be an option that changes where it connects"
    : undefined;
  const operands = staticTexts(parsed.operands);
  if (program === "wget")
    return { urls: [...operands.map(asUrl), ...wgetProxies(valuesOf(parsed.options, "-e", "--execute"))], unsure };
  // curl globs the URLs it fetches (operands, `--url`), not a proxy's or `--resolve`'s address.
  const globbed = [...operands, ...valuesOf(parsed.options, "--url")];
  const named = [
    ...valuesOf(parsed.options, ...[...CURL_DESTINATIONS].filter((n) => n !== "--url")),
    ...valuesOf(parsed.options, "--connect-to").flatMap(connectTo),
    ...valuesOf(parsed.options, "--resolve").flatMap(resolveTo),
  ];
  const globoff = parsed.options.some((o) => o.name === "-g" || o.name === "--globoff");
  const urls: string[] = [];
  for (const [i, written] of [...globbed, ...named].entries()) {
    // curl takes `http:/evil.com` (one slash) as http://evil.com; so is it read here.
    const text = written.replace(/^([a-z][a-z0-9+.-]*):\/(?!\/)/i, "$1://");
    const expanded = globoff || i >= globbed.length || !hasCurlGlob(text) ? [text] : expandCurlGlob(text);
    if (expanded === "too many") return { urls, unsure: `curl's glob \`${text.slice(0, 60)}\` names too many URLs` };
    // `file:` is no host: curl reads (or with -T writes) a local file, which no host rule covers.
    if ((expanded ?? []).some((u) => /^file:/i.test(u))) return { urls, unsure: "it reads a local file (`file:`)" };
    urls.push(...(expanded ?? []).map(asUrl));
  }
  return { urls, unsure };
}

// `--connect-to HOST1:PORT1:HOST2:PORT2`: connections to the first go to HOST2 (empty: the same).
function connectTo(value: string): string[] {
  const parts = /^(?:\[[^\]]*\]|[^:]*):[^:]*:(\[[^\]]*\]|[^:]*):/.exec(value);
  return parts && parts[1] ? [parts[1]] : [];
}
