// The hosts a network client on the line reaches for certain, read as the client reads its own
// arguments: every operand of curl and wget is a URL, with a scheme or without (`curl evil.com`
// fetches http://evil.com/), ssh's first operand is its destination (`[user@]host`), and a
// repository git reaches in its scp-like form (`git clone git@evil.com:r`). So are
// the values of options that name where to connect (`--url`, `-x`, `ssh -J`). These are the
// call's hosts as a URL's are: a deny rule on the host denies the line, not just asks about it.
// Options are read with the client's own table (the shared getopt); a line the table cannot
// read (an unknown option, a run-time word) gives nothing here and stays a question (hosts.ts).
import { getopt, getoptPermuted, type OptionSpec, type ParsedOption } from "../shell/getopt";
import type { SimpleCommand, Word } from "../shell/types";
import { expandCurlGlob, hasCurlGlob } from "./curl-glob";

const words = (text: string) => text.split(/\s+/).filter(Boolean);
const table = (takes: string, flags: string): Record<string, 0 | 1 | 2> =>
  Object.fromEntries([...words(takes).map((n) => [n, 1] as const), ...words(flags).map((n) => [n, 0] as const)]);

// curl 7.88's options (`curl --help all`): those that take a value, then those that do not.
const CURL: OptionSpec = {
  short: "aE:K:C:b:c:d:qD:fF:P:GgIH:h:0ik46jlLMm:n:No:Z#x:U:pQ:r:e:JORX:SsY:y:23t:z:1T:Bu:A:vVw:",
  long: table(
    "abstract-unix-socket alt-svc aws-sigv4 cacert capath cert cert-type ciphers config connect-timeout " +
      "connect-to continue-at cookie cookie-jar create-file-mode crlfile curves data data-ascii data-binary " +
      "data-raw data-urlencode delegation dns-interface dns-ipv4-addr dns-ipv6-addr dns-servers doh-url " +
      "dump-header egd-file engine etag-compare etag-save expect100-timeout form form-string ftp-account " +
      "ftp-alternative-to-user ftp-method ftp-port ftp-ssl-ccc-mode happy-eyeballs-timeout-ms header help " +
      "hostpubmd5 hostpubsha256 hsts interface json keepalive-time key key-type krb libcurl limit-rate " +
      "local-port login-options mail-auth mail-from mail-rcpt max-filesize max-redirs max-time netrc-file " +
      "noproxy oauth2-bearer output output-dir parallel-max pass pinnedpubkey preproxy proto proto-default " +
      "proto-redir proxy proxy-cacert proxy-capath proxy-cert proxy-cert-type proxy-ciphers proxy-crlfile " +
      "proxy-header proxy-key proxy-key-type proxy-pass proxy-pinnedpubkey proxy-service-name " +
      "proxy-tls13-ciphers proxy-tlsauthtype proxy-tlspassword proxy-tlsuser proxy-user proxy1.0 pubkey " +
      "quote random-file range rate referer request request-target resolve retry retry-delay retry-max-time " +
      "sasl-authzid service-name socks4 socks4a socks5 socks5-gssapi-service socks5-hostname speed-limit " +
      "speed-time stderr telnet-option tftp-blksize time-cond tls-max tls13-ciphers tlsauthtype tlspassword " +
      "tlsuser trace trace-ascii unix-socket upload-file url url-query user user-agent write-out",
    "anyauth append basic cert-status compressed compressed-ssh create-dirs crlf digest disable " +
      "disable-eprt disable-epsv disallow-username-in-url doh-cert-status doh-insecure fail fail-early " +
      "fail-with-body false-start form-escape ftp-create-dirs ftp-pasv ftp-pret ftp-skip-pasv-ip ftp-ssl-ccc " +
      "ftp-ssl-control get globoff haproxy-protocol head http0.9 http1.0 http1.1 http2 " +
      "http2-prior-knowledge http3 http3-only ignore-content-length include insecure ipv4 ipv6 " +
      "junk-session-cookies list-only location location-trusted mail-rcpt-allowfails manual metalink " +
      "negotiate netrc netrc-optional next no-alpn no-buffer no-clobber no-keepalive no-npn no-progress-meter " +
      "no-sessionid ntlm ntlm-wb parallel parallel-immediate path-as-is post301 post302 post303 progress-bar " +
      "proxy-anyauth proxy-basic proxy-digest proxy-insecure proxy-negotiate proxy-ntlm proxy-ssl-allow-beast " +
      "proxy-ssl-auto-client-cert proxy-tlsv1 proxytunnel raw remote-header-name remote-name remote-name-all " +
      "remote-time remove-on-error retry-all-errors retry-connrefused sasl-ir show-error silent socks5-basic " +
      "socks5-gssapi socks5-gssapi-nec ssl ssl-allow-beast ssl-auto-client-cert ssl-no-revoke ssl-reqd " +
      "ssl-revoke-best-effort sslv2 sslv3 styled-output suppress-connect-headers tcp-fastopen tcp-nodelay " +
      "tftp-no-options tlsv1 tlsv1.0 tlsv1.1 tlsv1.2 tlsv1.3 tr-encoding trace-time use-ascii verbose " +
      "version xattr",
  ),
};
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
// The proxies curl and wget take from the environment (curl reads the lower-case http_proxy only).
const PROXY_ENV = /^(?:all_proxy|https?_proxy|ftp_proxy|ALL_PROXY|HTTPS?_PROXY|FTP_PROXY)=([^\s'"`$\\]+)$/;

// GNU Wget 1.21's options (`wget --help`; -n reads -nv, -nc, -nd, -nH).
const WGET: OptionSpec = {
  short: "Vhbe:o:a:dqvi:FB:t:O:cNST:w:Q:46xP:EU:rl:kKmpA:R:D:HLI:X:n:",
  long: table(
    "execute output-file append-output report-speed input-file base config rejected-log tries " +
      "retry-on-http-error output-document start-pos progress timeout dns-timeout connect-timeout " +
      "read-timeout wait waitretry quota bind-address limit-rate restrict-file-names prefer-family user " +
      "password use-askpass local-encoding remote-encoding directory-prefix cut-dirs http-user http-password " +
      "default-page header compression proxy-user proxy-password referer user-agent load-cookies " +
      "save-cookies post-data post-file method body-data body-file secure-protocol certificate " +
      "certificate-type private-key private-key-type ca-certificate ca-directory crl-file pinnedpubkey " +
      "ciphers ftp-user ftp-password warc-file warc-header warc-max-size warc-dedup warc-tempdir level " +
      "backups accept reject accept-regex reject-regex regex-type domains exclude-domains follow-tags " +
      "ignore-tags include-directories exclude-directories max-redirect hsts-file",
    "version help background debug quiet verbose no-verbose force-html no-config retry-connrefused " +
      "no-clobber no-netrc continue show-progress timestamping no-if-modified-since no-use-server-timestamps " +
      "server-response spider random-wait no-proxy no-dns-cache ignore-case inet4-only inet6-only " +
      "ask-password no-iri unlink xattr no-directories force-directories no-host-directories " +
      "protocol-directories no-cache adjust-extension ignore-length save-headers no-http-keep-alive " +
      "no-cookies keep-session-cookies content-disposition content-on-error auth-no-challenge https-only " +
      "no-check-certificate no-hsts no-remove-listing no-glob no-passive-ftp preserve-permissions " +
      "retr-symlinks ftps-implicit ftps-resume-ssl ftps-clear-data-connection ftps-fallback-to-ftp warc-cdx " +
      "no-warc-compression no-warc-digests no-warc-keep-log recursive delete-after convert-links " +
      "convert-file-only backup-converted mirror page-requisites strict-comments follow-ftp span-hosts " +
      "relative trust-server-names",
  ),
};

// OpenSSH's ssh(1) optstring; its destination is the first operand.
const SSH: OptionSpec = { short: "1246ab:c:e:fgi:kl:m:no:p:qstvxAB:CD:E:F:GI:J:KL:MNO:P:Q:R:S:TVw:W:XYy" };

const SCHEME = /^[a-z][a-z0-9+.-]*:\/\//i;

// git's commands that take a repository, and its scp-like form of one (`git@evil.com:r.git`): a
// name with a dot (or an address in brackets) before the first colon, no slash before it. A
// refspec (`main:evil.com`) has no dot before its colon; a local path has a slash first.
const GIT_REMOTE_COMMANDS = new Set(["clone", "fetch", "pull", "push", "ls-remote", "remote", "submodule", "archive"]);
const SCP_LIKE = /^((?:[^@/:\s]+@)?(?:[a-z0-9_-]+(?:\.[a-z0-9_-]+)+|\[[0-9a-f:.]+\])):(?!\/\/)/i;

/** `text` as a URL a client given it without a scheme fetches (curl and wget default to http). */
const asUrl = (text: string) => (SCHEME.test(text) ? text : `http://${text}`);

// `[user@]host[:port]` (ssh, a jump host list item) as a URL whose host is that host.
const destination = (text: string) => (SCHEME.test(text) ? text : `ssh://${text}`);

const staticTexts = (ws: readonly (Word | undefined)[]) => ws.flatMap((w) => (w && !w.dynamic ? [w.text] : []));
const valuesOf = (options: ParsedOption[], names: Set<string>) =>
  staticTexts(options.filter((o) => names.has(o.name)).map((o) => o.value));

/** URLs `cmd` certainly connects to, beyond those spelled with a scheme in its words. */
export function clientUrls(cmd: SimpleCommand): string[] {
  return clientReach(cmd).urls;
}

/** Why the hosts `cmd` reaches cannot all be listed, though its words are known. */
export function clientUnsure(cmd: SimpleCommand): string | undefined {
  return clientReach(cmd).unsure;
}

function clientReach(cmd: SimpleCommand): { urls: string[]; unsure?: string } {
  const [program] = cmd.argv;
  const args = cmd.words.slice(1);
  if (program === "curl" || program === "wget") {
    // curl's `-:` is `--next` (more URLs follow), a letter the optstring cannot spell.
    const spelled = program === "curl" ? args.map((w) => (w.text === "-:" ? { ...w, text: "--next" } : w)) : args;
    const parsed = getoptPermuted(spelled, program === "curl" ? CURL : WGET);
    if (!parsed.ok) return { urls: [] };
    const elsewhere = parsed.options.find((o) => ELSEWHERE.has(o.name));
    if (elsewhere) return { urls: [], unsure: ELSEWHERE.get(elsewhere.name) };
    const proxies = cmd.assignments.flatMap((a) => PROXY_ENV.exec(a)?.[1] ?? []);
    const operands = staticTexts([...parsed.operands, ...(parsed.afterDashes ?? [])]);
    if (program === "wget") return { urls: [...operands, ...proxies].map(asUrl) };
    const named = [
      ...valuesOf(parsed.options, CURL_DESTINATIONS),
      ...valuesOf(parsed.options, new Set(["--connect-to"])).flatMap(connectTo),
      ...valuesOf(parsed.options, new Set(["--resolve"])).flatMap(resolveTo),
    ];
    const globoff = parsed.options.some((o) => o.name === "-g" || o.name === "--globoff");
    const urls: string[] = [];
    for (const written of [...operands, ...named, ...proxies]) {
      // curl takes `http:/evil.com` (one slash) as http://evil.com; so is it read here.
      const text = written.replace(/^([a-z][a-z0-9+.-]*):\/(?!\/)/i, "$1://");
      const expanded = globoff || !hasCurlGlob(text) ? [text] : expandCurlGlob(text);
      if (expanded === "too many") return { urls, unsure: `curl's glob \`${text.slice(0, 60)}\` names too many URLs` };
      // `file:` is no host: curl reads (or with -T writes) a local file, which no host rule covers.
      if ((expanded ?? []).some((u) => /^file:/i.test(u))) return { urls, unsure: "it reads a local file (`file:`)" };
      urls.push(...(expanded ?? []).map(asUrl));
    }
    return { urls };
  }
  if (program === "git" && args.some((w) => !w.dynamic && GIT_REMOTE_COMMANDS.has(w.text))) {
    const urls = staticTexts(args).flatMap((text) => {
      const m = SCP_LIKE.exec(text);
      return m ? [`ssh://${m[1]}`] : [];
    });
    return { urls };
  }
  if (program === "ssh") {
    const parsed = getopt(args, SSH);
    if (!parsed.ok) return { urls: [] };
    const jumps = valuesOf(parsed.options, new Set(["-J"])).flatMap((j) => j.split(","));
    return { urls: [...staticTexts([args[parsed.next]]), ...jumps].map(destination) };
  }
  return { urls: [] };
}

// `--connect-to HOST1:PORT1:HOST2:PORT2`: connections to the first go to HOST2 (empty: the same).
function connectTo(value: string): string[] {
  const m = /^(?:\[[^\]]*\]|[^:]*):[^:]*:(\[[^\]]*\]|[^:]*):/.exec(value);
  return m && m[1] ? [m[1]] : [];
}

// `--resolve [+]HOST:PORT:ADDR[,ADDR]…`: the name is looked up as those addresses.
function resolveTo(value: string): string[] {
  const m = /^\+?(?:\[[^\]]*\]|[^:]*):[^:]*:(.+)$/.exec(value);
  return m ? m[1].split(",").filter(Boolean) : [];
}
