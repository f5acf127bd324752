// The option tables of curl 7.88 and GNU Wget 1.21 (`curl --help all`, `wget --help`), as the
// shared getopt reads them, for hosts-clients.ts: which words are options, which take a value.
import type { OptionSpec } from "../shell/getopt";

// The booleans curl 7.88 also takes as `--no-NAME` (each checked against the real curl).
const NEGATABLE = (
  "anyauth append basic cert-status compressed compressed-ssh create-dirs crlf digest disable " +
  "disable-eprt disable-epsv disallow-username-in-url doh-cert-status doh-insecure fail fail-early " +
  "fail-with-body false-start form-escape ftp-create-dirs ftp-pasv ftp-pret ftp-skip-pasv-ip " +
  "ftp-ssl-ccc ftp-ssl-control get globoff haproxy-protocol head http0.9 ignore-content-length include " +
  "insecure junk-session-cookies list-only location location-trusted mail-rcpt-allowfails manual " +
  "metalink negotiate netrc netrc-optional ntlm ntlm-wb parallel parallel-immediate path-as-is post301 " +
  "post302 post303 progress-bar proxy-anyauth proxy-basic proxy-digest proxy-insecure proxy-negotiate " +
  "proxy-ntlm proxy-ssl-allow-beast proxy-ssl-auto-client-cert proxytunnel raw remote-header-name " +
  "remote-name remote-name-all remote-time remove-on-error retry-all-errors retry-connrefused sasl-ir " +
  "show-error silent socks5-basic socks5-gssapi socks5-gssapi-nec ssl ssl-allow-beast " +
  "ssl-auto-client-cert ssl-reqd ssl-revoke-best-effort styled-output suppress-connect-headers " +
  "tcp-fastopen tcp-nodelay tr-encoding trace-time use-ascii verbose version xattr"
).split(" ");

const words = (text: string) => text.split(/\s+/).filter(Boolean);
const table = (takes: string, flags: string): Record<string, 0 | 1 | 2> =>
  Object.fromEntries([...words(takes).map((n) => [n, 1] as const), ...words(flags).map((n) => [n, 0] as const)]);

// curl 7.88's options (`curl --help all`): those that take a value, then those that do not.
export const CURL: OptionSpec = {
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
      "version xattr " +
      // curl 7.88 takes `--no-NAME` for each boolean (tool_getparam.c; the whole name only, no
      // abbreviation after `no-`), and `--NAME` for one spelled `--no-NAME` in its help.
      NEGATABLE.map((n) => `no-${n}`).join(" ") +
      " alpn buffer clobber keepalive npn progress-meter sessionid",
  ),
};
// GNU Wget 1.21's options (`wget --help`; -n reads -nv, -nc, -nd, -nH).
export const WGET: OptionSpec = {
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
