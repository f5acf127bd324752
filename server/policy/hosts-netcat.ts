// Where the raw-socket clients connect: the netcat family (`nc`, `ncat`, `netcat`,
// `nc.openbsd`, `nc.traditional`), socat's addresses (`TCP:host:port`, `OPENSSL:…`,
// `PROXY:proxy:host:port`, `SOCKS4A:…`, keyword in any case, options after a comma), port
// scanners (nmap: every operand may be a target), telnet,
// `openssl s_client`/`s_time`/`ocsp` (`-connect`, `-host`, `-proxy`, `-url`, one or two dashes,
// the value glued by `=` or not), ftp and lftp. Each program connects to a host of the line's
// choosing with no URL to say so, so its destination is read here as hosts-ssh.ts reads ssh's;
// a command one runs (`nc -e`, `ncat --sh-exec`, socat's `EXEC:`/`SYSTEM:`) is read as a script.
// Checked against socat 1.7.4 and OpenSSL 3.0 on this machine (which host each looks up).
import type { SimpleCommand } from "../shell/types";
import type { OptionSpec } from "../shell/getopt";
import {
  certainPermuted,
  colonParts,
  hostUrl,
  SCHEME,
  staticTexts,
  valuesOf,
  type Nested,
  type Reach,
} from "./hosts-reach";

// The union of OpenBSD nc's, netcat-traditional's and ncat's short options (a value-taking
// letter in any of them takes one here: a value is then never read as the host), and ncat's
// long ones.
const NETCAT: OptionSpec = {
  short: "46abCc:DdFe:g:G:hI:i:klLM:m:NnO:o:P:p:q:rSs:T:tUuV:vW:w:X:x:Zz",
  long: Object.fromEntries([
    ..."exec sh-exec lua-exec proxy proxy-type proxy-auth proxy-dns source source-port wait idle-timeout output hex-dump append-output allow allowfile deny denyfile max-conns ssl-cert ssl-key ssl-trustfile ssl-ciphers ssl-servername ssl-alpn delay"
      .split(" ")
      .map((n) => [n, 1] as const),
    ..."listen udp sctp send-only recv-only broker chat ssl ssl-verify nodns crlf telnet keep-open version help verbose zero unixsock vsock no-shutdown ipv4 ipv6"
      .split(" ")
      .map((n) => [n, 0] as const),
  ]),
};
// cryptcat is netcat-traditional with encryption; pwncat (and pwncat-cs) take netcat's
// `host port` or `[user@]host[:port]`, with options of their own (then every word is read).
const NETCATS = /^(nc|ncat|netcat|nc\.openbsd|nc\.traditional|pnetcat|cryptcat|pwncat|pwncat-cs)$/;
// nmap's targets are its operands, any number of them; `-iL` reads more from a file.
const SCANNERS = /^(nmap|masscan|zmap|hping3|nping)$/;
const TELNET: OptionSpec = { short: "468EFKLNacdfrxX:b:e:k:l:n:S:" };
const FTP: OptionSpec = { short: "46AadefgiNnpRtvVo:P:q:r:s:T:u:" };

// A word that is a port (or a range of them), not a host: `22`, `20-25`. A service name
// (`http`) is not told from a one-label host (`localhost`, `metadata`): it counts as a host.
const PORT = /^\d{1,5}(-\d{1,5})?$/;
const isPort = (t: string) => PORT.test(t) && t.split("-").every((n) => Number(n) <= 65535);

// As a URL the parser reads the host of as a resolver might: `evil。com` and `2852039166`
// each in the one form a rule compares (an `ssh:` URL's host is left as written).
function hostOf(text: string): string | undefined {
  if (SCHEME.test(text)) return text;
  // `host:port`, the port a number or a service's name (`evil.com:https`): the host alone.
  const host = text.replace(/^[^@]*@/, "").replace(/^([^:[\]]+):[^:]*$/, "$1");
  return hostUrl(host)?.replace(/^ssh:/, "http:");
}
const hostsOf = (texts: readonly string[]) => texts.flatMap((t) => hostOf(t) ?? []);

// What cannot be read: every word that may be a host counts, and the rest stays a question.
function guessed(cmd: SimpleCommand, reason: string): Reach {
  const words = staticTexts(cmd.words.slice(1)).filter((t) => !t.startsWith("-") && !isPort(t));
  return { urls: hostsOf(words), unsure: `\`${cmd.argv[0]}\` ${reason}` };
}

function nestedAll(texts: readonly string[], nested: Nested, why: string, into: Reach) {
  for (const t of texts) {
    const r = nested(t);
    into.urls.push(...r.urls);
    into.unsure ??= r.unsure && `${why}: ${r.unsure}`;
  }
}

/** nc, ncat, netcat: the host operand (not when listening), the proxy, and what `-e`/`-c` run. */
function netcatReach(cmd: SimpleCommand, program: string, nested: Nested): Reach {
  const parsed = certainPermuted(cmd.words.slice(1), NETCAT);
  if (!parsed.ok) return guessed(cmd, parsed.reason);
  const names = parsed.options.map((o) => o.name);
  const out: Reach = { urls: [] };
  // ncat's `-U` is UDP; OpenBSD nc's a Unix socket.
  const local = names.some((n) => /^(-l|--listen|--unixsock|--vsock)$/.test(n) || (n === "-U" && program !== "ncat"));
  // The builds disagree on which letters take a value (ncat's `-d 1` is a delay, OpenBSD's `-d`
  // a flag): every word that is no option and no port may be the host, wherever it stands.
  if (!local)
    out.urls.push(...hostsOf(staticTexts(cmd.words.slice(1)).filter((t) => !t.startsWith("-") && !isPort(t))));
  // ncat's `-x` is a hex dump's file; OpenBSD nc's is the proxy.
  const proxies = valuesOf(parsed.options, "--proxy", ...(program === "ncat" ? [] : ["-x"]));
  out.urls.push(...hostsOf(proxies.map((p) => colonParts(p)[0] ?? p)));
  nestedAll(valuesOf(parsed.options, "-e", "-c", "--exec", "--sh-exec"), nested, "the command it runs", out);
  if (names.includes("--lua-exec")) out.unsure ??= "it runs a Lua script (`--lua-exec`)";
  if (parsed.partial) out.unsure ??= "a word only known at run time may be its host";
  return out;
}

// socat's address types that connect out, and which of their `:` fields are hosts.
const SOCAT_CONNECT =
  /^(tcp[46]?(-connect)?|udp[46]?(-connect|-sendto|-datagram)?|sctp[46]?(-connect)?|dccp[46]?(-connect)?|openssl(-connect|-dtls-client)?|ssl|ip[46]?-(sendto|datagram)|udplite[46]?(-connect|-sendto|-datagram)?)$/;
const SOCAT_PROXY = /^(proxy(-connect)?|socks4a?|socks5(-connect)?)$/;
const SOCAT_RUN = /^(exec|system)$/;

// socat takes `"…"` and `'…'` around parts of an address and `\` before a character.
const unquoteSocat = (t: string) => t.replace(/\\(.)/g, "$1").replace(/["']/g, "");

/** socat: every address that connects, and the command `EXEC:`/`SYSTEM:` runs. */
function socatReach(cmd: SimpleCommand, nested: Nested): Reach {
  const out: Reach = { urls: [] };
  const words = cmd.words.slice(1);
  if (words.some((w) => w.dynamic)) out.unsure = "an address only known at run time may name any host";
  for (const text of staticTexts(words)) {
    if (text.startsWith("-") && text !== "-") continue;
    for (const address of text.split("!!")) {
      const m = /^([a-z0-9-]+):(.*)$/is.exec(address);
      if (!m) continue;
      const type = m[1].toLowerCase();
      if (SOCAT_RUN.test(type)) {
        const command = m[2].replace(/,[a-z-]+(=[^,]*)?$/i, "");
        nestedAll([command], nested, `the command its \`${m[1]}:\` runs`, out);
        continue;
      }
      const fields = colonParts(unquoteSocat(m[2].split(",")[0]));
      const hosts = SOCAT_CONNECT.test(type) ? fields.slice(0, 1) : SOCAT_PROXY.test(type) ? fields.slice(0, 2) : [];
      out.urls.push(...hostsOf(hosts));
    }
  }
  return out;
}

// openssl's options that name where it connects, as `-name value`, `--name value`, `-name=value`.
const OPENSSL_HOSTS = new Set(["connect", "host", "proxy", "url"]);

/** openssl: `-connect`, `-host`, `-proxy`, `-url`, and s_client's `host[:port]` operand. */
function opensslReach(cmd: SimpleCommand): Reach {
  const words = cmd.words.slice(1);
  const out: Reach = { urls: [] };
  // s_client connects to an operand (`openssl s_client evil.com`), wherever it stands among
  // options whose values are files and names: each such word may be it.
  const client = /^s_(client|time)$/.test(words[0]?.text ?? "");
  for (let i = 1; i < words.length; i++) {
    const w = words[i];
    if (w.dynamic) {
      out.unsure ??= "a word only known at run time may name where it connects";
      continue;
    }
    const m = /^--?([a-z_]+)(?:=(.*))?$/is.exec(w.text);
    if (m && OPENSSL_HOSTS.has(m[1].toLowerCase())) {
      const value = m[2] ?? (words[i + 1] && !words[i + 1].dynamic ? words[++i].text : undefined);
      if (value) out.urls.push(...hostsOf([value]));
    } else if (client && !w.text.startsWith("-")) out.urls.push(...hostsOf([w.text]));
  }
  return out;
}

/** telnet and ftp: the host operand (a URL for tnftp's auto-fetch), read with their tables. */
function hostFirst(cmd: SimpleCommand, spec: OptionSpec): Reach {
  const parsed = certainPermuted(cmd.words.slice(1), spec);
  if (!parsed.ok) return guessed(cmd, parsed.reason);
  const operands = staticTexts(parsed.operands);
  const urls = operands.flatMap((t, i) => (SCHEME.test(t) ? [t] : i === 0 ? hostsOf([t]) : []));
  return { urls, unsure: parsed.partial ? "a word only known at run time may be its host" : undefined };
}

/** lftp: its site operand, and the sites `open` names in the commands `-c`/`-e` give it. */
function lftpReach(cmd: SimpleCommand): Reach {
  const out: Reach = { urls: [] };
  const words = cmd.words.slice(1);
  for (let i = 0; i < words.length; i++) {
    const w = words[i];
    if (w.dynamic) {
      out.unsure ??= "a word only known at run time may name its site";
      continue;
    }
    if (/^-[cep]$|^-u$|^--rcfile$/.test(w.text)) {
      const value = words[++i];
      if (value && !value.dynamic && /^-[ce]$/.test(w.text)) out.urls.push(...opened(value.text));
    } else if (w.text === "-f") out.unsure ??= "it runs lftp commands from a file (`-f`)";
    else if (!w.text.startsWith("-")) out.urls.push(...hostsOf([w.text]));
  }
  return out;
}

/** `open [-u user] [-p port] site` among lftp, ftp or telnet commands (`;`, `&&`, newlines
 *  between them), a port after the site read as no host. */
export function opened(script: string): string[] {
  const urls: string[] = [];
  for (const part of script.split(/[;&|\n]+/)) {
    const words = part.trim().split(/\s+/);
    if (!/^(open|o|connect|lftp)$/.test(words[0] ?? "")) continue;
    for (let i = 1; i < words.length; i++) {
      if (/^-[upeUsB]$/.test(words[i])) i++;
      else if (!words[i].startsWith("-") && !isPort(words[i]))
        urls.push(...hostsOf([words[i].replace(/^["']|["']$/g, "")]));
    }
  }
  return urls;
}

/** The raw-socket clients' reach, or undefined for any other program. */
export function socketClientReach(cmd: SimpleCommand, nested: Nested): Reach | undefined {
  const program = cmd.argv[0]?.toLowerCase();
  if (program === undefined) return undefined;
  if (NETCATS.test(program)) return netcatReach(cmd, program, nested);
  if (program === "socat") return socatReach(cmd, nested);
  if (SCANNERS.test(program)) return guessed(cmd, "reads its targets by options the policy does not list");
  if (program === "openssl") return opensslReach(cmd);
  if (program === "telnet") return hostFirst(cmd, TELNET);
  if (program === "ftp" || program === "tnftp" || program === "pftp") return hostFirst(cmd, FTP);
  if (program === "lftp") return lftpReach(cmd);
  return undefined;
}
