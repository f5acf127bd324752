// Host names as a `host` rule compares them. One host has many spellings that reach it: a
// trailing dot (`evil.com.` is the DNS root's name for `evil.com`), an IPv4 address inside IPv6
// (`[::ffff:a9fe:a9fe]` is 169.254.169.254), decimal or hex IPv4 (`2852039166`), a rule written
// in Unicode where the URL parser gives punycode. Both sides are brought to one form before the
// glob runs, and an address is tried in every form that reaches it. A command line's words are
// read for host names too (`curl evil.com`, `--url=https://evil.com`), since a shell command
// names hosts in more ways than a URL can be picked out of it: decoded and expanded where bash
// would (hosts-words.ts), and any word only known at run time may name any host. So are the
// line's network redirects (`</dev/tcp/evil.com/80`) and the text its here-documents and
// here-strings feed programs (hosts-feeds.ts), which are no command's words, and the text it
// writes into a network client's configuration (planted-config.ts).
import { domainToASCII } from "node:url";
import ipaddr from "ipaddr.js";
import type { SimpleCommand } from "../shell/analyse";
import { expandWord, GAP, type Expansion } from "./hosts-words";
import { lineFeeds, socketHosts, type Feed } from "./hosts-feeds";
import { clientUnsure } from "./hosts-clients";
import { plantedConfig } from "./planted-config";

/** `evil.com.` → `evil.com`, `[::1]` → `::1`, `EVIL.com` → `evil.com`. */
export function normaliseHost(host: string): string {
  let h = host.trim().toLowerCase();
  if (h.startsWith("[") && h.endsWith("]")) h = h.slice(1, -1);
  return h.replace(/\.+$/, "");
}

/** The spelling the URL parser gives a host written any way (`0xa9.254.0251.254`, `EXÄMPLE.com`). */
export function canonicalHost(text: string): string | undefined {
  const h = normaliseHost(text);
  if (!h) return undefined;
  try {
    return normaliseHost(new URL(`http://${h.includes(":") ? `[${h}]` : h}/`).hostname) || undefined;
  } catch {
    return undefined;
  }
}

/** The hosts a command line connects to for certain, through bash's `/dev/tcp/HOST/PORT` (its
 *  scripts' too), in the form rules compare: a host of the call, as a URL's host is. */
export function lineSockets(line: string): string[] {
  return socketHosts(line)
    .map(canonicalHost)
    .filter((h): h is string => !!h);
}

const IPV4_TAIL = /^(?:::ffff:(?:0:)?|64:ff9b::|::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/;

/** A host and, for an address, the forms that reach it: an IPv4 address in any notation the
 *  resolver takes (`2852039166`, `0xa9fea9fe`, `169.254.43518`: ssh, scp and rsync hand their
 *  host to getaddrinfo, which reads them all) as dotted quads, and for an IPv6 address carrying
 *  an IPv4 one (mapped, NAT64, compatible) that too. */
export function hostForms(host: string): string[] {
  const h = normaliseHost(host);
  const forms = [h];
  let address: ipaddr.IPv4 | ipaddr.IPv6 | undefined;
  try {
    address = ipaddr.parse(h);
  } catch {
    // A name, not an address.
  }
  const canonical = address?.toString();
  if (canonical && canonical !== h) forms.push(canonical);
  const m = IPV4_TAIL.exec(canonical ?? h);
  if (m) {
    const [hi, lo] = [parseInt(m[1], 16), parseInt(m[2], 16)];
    forms.push(`${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`);
  }
  return forms;
}

const patterns = new Map<string, string>();
/** A rule's host glob in the form hosts are compared in: lower case, punycode, no trailing dot. */
export function normalisePattern(pattern: string): string {
  let p = patterns.get(pattern);
  if (p === undefined) {
    p = normaliseHost(pattern);
    if (!/[*?]/.test(p)) p = canonicalHost(p) ?? p;
    else if (/[^\x00-\x7f]/.test(p)) p = domainToASCII(p) || p;
    if (patterns.size > 1000) patterns.clear();
    patterns.set(pattern, p);
  }
  return p;
}

// A word's pieces that could be a host name: `x@evil.com:/p` → `x`, `evil.com`, `p`. The URL
// parser reads more as part of a host: ideographic and full-width dots (`evil。com`), and
// drops soft hyphens, zero-width spaces and other format or combining characters (`ev\u00adil`).
function hostTokens(text: string): string[] {
  return text.split(/[^\p{L}\p{N}\p{M}\p{Cf}.\-_\u3002\uff0e\uff61]+/u).filter((t) => t.length > 0 && t.length <= 253);
}

// A URL's host is read whole: `http://[::ffff:a9fe:a9fe]/` is no token of the text around it.
const URL_IN_TEXT = /[a-z][a-z0-9+.-]*:\/\/[^\s'"`<>]+/gi;

/** The hosts a line writes into a network client's configuration (planted-config.ts): reached by
 *  the client that reads it, on this line or a later one. */
export function plantedHosts(line: string): string[] {
  return [...new Set(plantedConfig(line).texts.flatMap(hostsIn))];
}

/** The hosts a text names, each in the form rules compare (canonicalHost), first seen first. */
function hostsIn(text: string): string[] {
  const found = new Set<string>();
  hostsOfText(text, found);
  // curl and wget decode a host's percent escapes, with a scheme or without (`curl %65vil.com`).
  if (text.includes("%")) hostsOfText(percentDecoded(text), found);
  return [...found];
}

function hostsOfText(text: string, found: Set<string>): void {
  for (const m of text.matchAll(URL_IN_TEXT)) {
    try {
      const h = normaliseHost(new URL(m[0]).hostname);
      if (h) found.add(h);
    } catch {
      // Not a URL after all; its tokens are read below.
    }
  }
  for (const t of new Set(hostTokens(text))) {
    const h = canonicalHost(t);
    if (h) found.add(h);
  }
}

/** `%XX` escapes decoded as UTF-8 bytes, the rest left as it is (a stray `%` too). */
function percentDecoded(text: string): string {
  return text.replace(/(?:%[0-9a-f]{2})+/gi, (run) => {
    const bytes = Buffer.from(run.replaceAll("%", ""), "hex");
    return bytes.toString("utf8");
  });
}

// A here-document can be long, and every host rule reads it: its hosts are listed once.
// `sockets`: hosts bash connects to, whole (`/dev/tcp/::ffff:7f00:1/80`, `/dev/tcp/2130706433/80`);
// `named`: hosts its text names, as a command's words are read.
const feedHosts = new WeakMap<Feed, { sockets: readonly string[]; named: readonly string[] }>();
function hostsOfFeed(feed: Feed): { sockets: readonly string[]; named: readonly string[] } {
  let hosts = feedHosts.get(feed);
  if (!hosts) {
    const sockets = feed.sockets.map(canonicalHost).filter((h): h is string => !!h);
    hosts = { sockets, named: [...new Set([...feed.sockets, ...feed.texts].flatMap(hostsIn))] };
    feedHosts.set(feed, hosts);
  }
  return hosts;
}

/**
 * Where a command line may reach a host the pattern names without a URL the policy can parse:
 * the command that names it (`curl evil.com`, `ssh git@evil.com`, `curl $'evi\x6c.com'`,
 * `curl evi{l,}.com`, `U=http://evil.com`), has a word only known at run time (`curl $H`,
 * `curl $(…)`, `X=$(…)`: any host at all) or cannot be seen through; given the line, also a
 * network redirect (`cat </dev/tcp/evil.com/80`, `</dev/tcp/$H/80`) or a here-document or
 * here-string whose text names the host or is only known at run time. A pattern of wildcards
 * only (`*`) names no host a word could be recognised as, so only what cannot be seen, and a
 * socket bash opens, are reported then.
 */
export function commandMayReach(
  matches: (host: string) => boolean,
  pattern: string,
  commands: readonly SimpleCommand[],
  /** The call has network. Without it a word known only at run time reaches no host (the
   *  sandbox has none), so only a named host counts: `echo $HOME` is no question then. */
  network = true,
  /** The line `commands` are of: its redirects and here-documents are read too (hosts-feeds.ts). */
  line?: string,
): string | undefined {
  const literal = /[^*?.]/.test(normalisePattern(pattern));
  const planted = commands.some((c) => [...c.assignments, ...c.argv].some((w) => CONFIG_ENV.test(w)));
  const among = (hosts: readonly string[]) => (literal ? hosts.find((h) => hostForms(h).some(matches)) : undefined);
  const names = (text: string) => among(hostsIn(text));
  // A name anywhere on the line says more than a run-time word: that is looked for first.
  let unknown: string | undefined;
  if (line !== undefined) {
    const { commands: all, feeds } = lineFeeds(line);
    // A rule on one program is handed its commands only: a redirect counts where it feeds one.
    const every = commands.length >= all;
    for (const feed of feeds) {
      if (!every && !commands.some((c) => c.source.length > 0 && feed.scope.includes(c.source))) continue;
      const hosts = hostsOfFeed(feed);
      // A socket reaches a host for certain: a catch-all rule (`*`) holds for it too.
      const h = hosts.sockets.find((s) => hostForms(s).some(matches)) ?? among(hosts.named);
      if (h) return `\`${feed.shown}\` (it names ${h})`;
      if (network && feed.runtime) unknown ??= `\`${feed.shown}\` (${feed.runtime})`;
    }
    // Configuration a client will read, written with text the policy cannot read (`cp x
    // ~/.ssh/config`): it may send that client anywhere, on this line or a later one.
    const planted = every ? plantedConfig(line).unseen : undefined;
    if (planted) unknown ??= `${planted} with text the policy cannot read, which may send it to any host`;
  }
  for (const cmd of commands) {
    const fromFile = readsDestinationsFromFile(cmd, planted);
    if (fromFile) return `\`${cmd.source}\` (${fromFile})`;
    const why = cmd.opaque ?? cmd.runsCode ?? clientUnsure(cmd);
    if (why) return `\`${cmd.source}\` (${why})`;
    // The source too: a here-string (`telnet <<< "open evil.com"`) is no word.
    const named = names(cmd.source);
    if (named) return `\`${cmd.source}\` (it names ${named})`;
    const values = [
      ...cmd.words.map((w, i) => ({ w, e: w.dynamic ? expandWord(w.text) : undefined, i })),
      ...cmd.assignments.map((a) => ({ w: { text: a, dynamic: true }, e: assignmentValue(a), i: -1 })),
    ];
    for (const { w, e, i } of values) {
      for (const text of e ? [...e.values, ...e.fragments] : [w.text]) {
        const h = names(text);
        if (h) return `\`${cmd.source}\` (it names ${h})`;
      }
      if (!network || unknown || !e || (!e.unknown && (e.explained || i < 0))) continue;
      // File names from a glob stay file names for a program that only opens files.
      if ("globOnly" in w && w.globOnly && i > 0 && FILE_TOOLS.has(cmd.argv[0])) continue;
      const shown = w.text.length > 40 ? `${w.text.slice(0, 40)}…` : w.text;
      unknown = `\`${cmd.source}\` (\`${shown}\` is only known at run time and may name any host)`;
    }
  }
  return unknown;
}

// `NAME=value`, `NAME+=value`: the value, expanded as bash expands an assignment's (no braces).
function assignmentValue(assignment: string): Expansion {
  const m = /^[A-Za-z_]\w*(?:\[[^\]]*\])?\+?=(.*)$/s.exec(assignment);
  return m
    ? expandWord(m[1], true)
    : { values: [], unknown: true, fragments: [assignment], explained: false, shapes: [GAP] };
}

// Programs that open the files a glob names as files, and never a host by a file's name.
const FILE_TOOLS = new Set(
  (
    "cat head tail less more wc grep egrep fgrep rg ls stat file du diff cmp rm rmdir mkdir touch chmod " +
    "cp mv ln sort uniq cut md5sum sha1sum sha256sum sha512sum"
  ).split(" "),
);

// Where curl and wget take more URLs than the line names: a config or list file (`curl -K f`,
// `wget -i f`, `wget -e url=…`), or a config directory the line points elsewhere (`CURL_HOME=.`
// finds a .curlrc the model wrote in the workspace, whose `url = …` is fetched too).
const CONFIG_ENV = /^(CURL_HOME|XDG_CONFIG_HOME|HOME|WGETRC|SYSTEM_WGETRC)=/;
const FILE_OPTIONS: Record<string, { short: RegExp; long: string[] }> = {
  curl: { short: /^-[a-zA-Z]*K/, long: ["--config"] },
  wget: { short: /^-[a-zA-Z]*[ie]/, long: ["--input-file", "--execute", "--config"] },
};

function readsDestinationsFromFile(cmd: SimpleCommand, planted: boolean): string | undefined {
  const program = cmd.argv[0]?.toLowerCase().replace(/2$/, "");
  const options = program ? FILE_OPTIONS[program] : undefined;
  if (!options) return undefined;
  if (planted) return "its configuration is read from where the line points it";
  const args = cmd.argv.slice(1);
  const end = args.indexOf("--");
  for (const a of end < 0 ? args : args.slice(0, end)) {
    if (a.startsWith("--")) {
      const name = a.split("=")[0];
      if (name.length > 2 && options.long.some((l) => l.startsWith(name))) return "it reads more URLs from a file";
    } else if (options.short.test(a)) return "it reads more URLs from a file";
  }
  return undefined;
}
