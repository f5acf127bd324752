// Where ssh and the programs that run it (scp, sftp, rsync) connect, read as OpenSSH 9.2 and
// rsync 3.2 read their arguments (checked with `ssh -G`, which prints the resolved config). ssh
// reads options before its destination and again after it, up to the remote command; an `-o`
// option is a config line (`Hostname=evil.com`, `hostname evil.com`, any case) and the first
// value of each keyword wins, so every one is counted. The hosts are its destination, `-J`,
// `-W`, `-L`/`-R` targets, and `-o Hostname`/`ProxyJump`/`LocalForward`/`RemoteForward`/
// `CanonicalDomains` (each domain, and the destination looked up in it); a
// command it runs locally (`ProxyCommand`, `LocalCommand`, `KnownHostsCommand`, rsync's `-e`)
// is read as a script, and an ssh config file given on the line (`-F`), which may point the
// destination anywhere, leaves the command unsure.
import type { SimpleCommand, Word } from "../shell/types";
import type { OptionSpec, ParsedOption } from "../shell/getopt";
import { expandWord } from "./hosts-words";
import {
  certainLeading,
  certainPermuted,
  colonParts,
  destination,
  hostUrl,
  remoteSpec,
  SCHEME,
  staticTexts,
  valuesOf,
  type Nested,
  type Reach,
} from "./hosts-reach";

// The optstrings of OpenSSH 9.2's ssh, scp and sftp (their getopt calls).
const SSH: OptionSpec = { short: "1246ab:c:e:fgi:kl:m:no:p:qstvxAB:CD:E:F:GI:J:KL:MNO:P:Q:R:S:TVw:W:XYy" };
const SCP: OptionSpec = { short: "12346ABCTdfOpqRrstvD:F:J:M:P:S:c:i:l:o:X:" };
const SFTP: OptionSpec = { short: "1246AafhNpqrvCc:D:i:l:o:s:S:b:B:F:J:P:R:X:" };

// A config line: the keyword, then `=` or blanks, then its arguments.
const CONFIG_LINE = /^\s*([A-Za-z0-9]+)(?:\s*=\s*|\s+)(.*)$/s;

// ssh_config's argument splitting: blanks separate, quotes group, `#` starts a comment.
function configArgs(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/"([^"]*)"|'([^']*)'|(#.*$)|([^\s"'#]+)/gs)) {
    if (m[3] !== undefined) break;
    out.push(m[1] ?? m[2] ?? m[4]);
  }
  return out;
}

// `%h` is the destination's host, `%%` a percent sign (ssh's percent_expand).
const expand = (text: string, host: string) => text.replace(/%([%h])/g, (_, c: string) => (c === "%" ? "%" : host));

// The host of a forward's target: `[bind:]port:host:hostport` (`-L`, `-R`), or the `host:port`
// argument of `LocalForward`/`RemoteForward`. A Unix socket path is no host.
function forwardTarget(spec: string, minParts: number): string[] {
  if (spec.includes("/")) return [];
  const parts = colonParts(spec);
  const url = parts.length >= minParts ? hostUrl(parts[parts.length - 2]) : undefined;
  return url ? [url] : [];
}

/** What `-o` values (and the `-J`, `-W`, `-L`, `-R` options) make ssh connect to or run. */
function optionReach(options: readonly ParsedOption[], host: string, nested: Nested): Reach {
  const urls: string[] = [];
  let unsure: string | undefined;
  const jumps = (list: string) =>
    list
      .split(",")
      .filter((j) => j && j !== "none")
      .map(destination);
  for (const j of valuesOf(options, "-J")) urls.push(...jumps(j));
  for (const w of valuesOf(options, "-W")) urls.push(...forwardTarget(w, 2));
  for (const f of valuesOf(options, "-L", "-R")) urls.push(...forwardTarget(f, 3));
  if (options.some((o) => o.name === "-F")) unsure = "it reads an ssh config file that may send it to any host (`-F`)";
  for (const text of valuesOf(options, "-o")) {
    const m = CONFIG_LINE.exec(text);
    if (!m) continue;
    const key = m[1].toLowerCase();
    const args = configArgs(m[2]);
    if (key === "hostname" && args[0]) {
      const url = hostUrl(expand(args[0], host));
      if (url) urls.push(url);
    } else if (key === "proxyjump" && args[0]) urls.push(...jumps(args[0]));
    else if (key === "canonicaldomains") {
      // `CanonicalizeHostname` looks the destination up as `host.domain` in each: the domain's
      // owner answers for every name in it, so the domain counts as reached too.
      for (const d of args
        .join(",")
        .split(/[\s,]+/)
        .filter(Boolean))
        urls.push(...[hostUrl(d), host && hostUrl(`${host}.${d}`)].filter((u): u is string => !!u));
    } else if ((key === "localforward" || key === "remoteforward") && args[1]) urls.push(...forwardTarget(args[1], 2));
    else if (key === "proxycommand" || key === "localcommand" || key === "knownhostscommand") {
      // ssh runs the rest of the line with the user's shell (`exec …`).
      const reach = nested(expand(m[2], host));
      urls.push(...reach.urls);
      unsure ??= reach.unsure && `its \`${m[1]}\` ${reach.unsure}`;
    }
  }
  return { urls, unsure };
}

// The host part of `[user@]host[:port]` or `ssh://…`, for `%h`.
function hostOf(dest: string): string {
  try {
    return new URL(destination(dest)).hostname;
  } catch {
    return dest;
  }
}

/** ssh: its destination and what its options name. */
export function sshReach(cmd: SimpleCommand, nested: Nested): Reach {
  const args = cmd.words.slice(1);
  const first = certainLeading(args, SSH);
  if (!first.ok) return { urls: [], unsure: `\`ssh\` ${first.reason}` };
  const dest = first.operand;
  // ssh reads options again after its destination, up to the remote command.
  const after = dest ? certainLeading(args.slice(first.next + 1), SSH) : undefined;
  const options = [...first.options, ...(after?.ok ? after.options : [])];
  const target = dest && !dest.dynamic ? dest.text : "";
  const reach = optionReach(options, hostOf(target), nested);
  // Run by another program (rsync's `-e`, git's core.sshCommand), ssh is read for where it
  // goes: a destination or option only known at run time may be any host.
  if (args.some((w) => w.dynamic && expandWord(w.text).unknown))
    reach.unsure ??= "its destination or options are only known at run time";
  // An address without brackets (`ssh ::1`) is no URL's host until it has them.
  const bare = target.split(":").length > 2 && !SCHEME.test(target) && !target.includes("[");
  const url = !target ? undefined : bare ? hostUrl(target.replace(/^[^@]*@/, "")) : destination(target);
  return { urls: [...(url ? [url] : []), ...reach.urls], unsure: reach.unsure };
}

/** scp and sftp: every remote file spec or URL among their words, and their ssh options. */
export function scpReach(cmd: SimpleCommand, nested: Nested): Reach {
  const sftp = cmd.argv[0] === "sftp";
  const args = cmd.words.slice(1);
  const parsed = certainPermuted(args, sftp ? SFTP : SCP);
  // A word the table cannot place may be an option's value or a file: every word is read.
  const operands = parsed.ok ? parsed.operands : args.filter((w) => !w.text.startsWith("-"));
  const texts = staticTexts(operands);
  const urls = texts.flatMap((t) => remoteSpec(t) ?? []);
  // sftp's destination may be a bare host (`sftp evil.com`).
  const bare = sftp && texts[0] && !remoteSpec(texts[0]) ? hostUrl(texts[0].replace(/^[^@]*@/, "")) : undefined;
  if (bare) urls.push(bare);
  if (!parsed.ok) return { urls, unsure: `\`${cmd.argv[0]}\` ${parsed.reason}` };
  const reach = optionReach(parsed.options, "", nested);
  let unsure = reach.unsure;
  // `-S program` is run in place of ssh, `-D path` in place of a connection.
  if (parsed.options.some((o) => o.name === "-S")) unsure ??= "it runs the program `-S` names in place of ssh";
  if (parsed.options.some((o) => o.name === "-D")) unsure ??= "it runs the program `-D` names";
  return { urls: [...urls, ...reach.urls], unsure };
}

// rsync's options that take a value as the next word or glued (`-e CMD`, `-eCMD`), among the
// short ones it has; a long option takes `--name=value` or `--name value`.
const RSYNC_SHORT_VALUE = "efBMT";
const RSYNC_LONG_VALUE =
  /^--(rsh|rsync-path|filter|exclude|include|exclude-from|include-from|files-from|remote-option|block-size|temp-dir|partial-dir|compare-dest|copy-dest|link-dest|backup-dir|suffix|chmod|chown|usermap|groupmap|log-file|log-file-format|out-format|password-file|port|sockopts|address|timeout|contimeout|bwlimit|max-size|min-size|max-delete|modify-window|skip-compress|checksum-choice|compress-choice|compress-level|info|debug|iconv|only-write-batch|write-batch|read-batch|protocol|outbuf|stop-after|stop-at|copy-as|max-alloc|mkpath)$/;

/** rsync: every remote spec among its words (an option's value too: `--files-from=host:f`),
 *  `rsync://` URLs, and the command `-e`/`--rsh` runs, read as a script (RSYNC_RSH: hosts-env.ts). */
export function rsyncReach(cmd: SimpleCommand, nested: Nested): Reach {
  const args = cmd.words.slice(1);
  const urls: string[] = [];
  const shells: Word[] = [];
  for (let i = 0; i < args.length; i++) {
    const w = args[i];
    if (w.text === "--") {
      urls.push(...staticTexts(args.slice(i + 1)).flatMap((t) => remoteSpec(t) ?? []));
      break;
    }
    const eq = w.text.indexOf("=");
    if (w.text.startsWith("--")) {
      const name = eq < 0 ? w.text : w.text.slice(0, eq);
      const value =
        eq < 0 ? (RSYNC_LONG_VALUE.test(name) ? args[++i] : undefined) : { ...w, text: w.text.slice(eq + 1) };
      if (value && name === "--rsh") shells.push(value);
      else if (value && !value.dynamic) urls.push(...staticTexts([value]).flatMap((t) => remoteSpec(t) ?? []));
      continue;
    }
    const short = /^-([a-zA-Z0-9]*?)([efBMT])(.*)$/s.exec(w.text);
    if (short && RSYNC_SHORT_VALUE.includes(short[2])) {
      const value = short[3] !== "" ? { ...w, text: short[3] } : args[++i];
      if (value && short[2] === "e") shells.push(value);
      continue;
    }
    if (!w.text.startsWith("-")) urls.push(...staticTexts([w]).flatMap((t) => remoteSpec(t) ?? []));
  }
  let unsure: string | undefined;
  for (const s of shells) {
    if (s.dynamic) {
      unsure ??= "it runs a remote shell only known at run time (`-e`)";
      continue;
    }
    const reach = nested(s.text);
    urls.push(...reach.urls);
    unsure ??= reach.unsure && `the command its \`-e\` names: ${reach.unsure}`;
  }
  return { urls, unsure };
}
