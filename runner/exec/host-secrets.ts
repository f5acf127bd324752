// The host's secrets, masked in every sandbox. The sandbox binds the host's / read-only, and
// read-only is not unreadable: the runner's user (root on most machines) owns its home, so a
// command read ~/.ssh, ~/.aws, ~/.npmrc, ~/.config/gh, shell histories, every home under /home,
// and as root /etc/shadow or a database's files. No uid inside the sandbox helps (the owner of a
// 0600 file is whoever the namespace maps to the runner's uid): each such place gets a mount over
// it. Homes get an empty read-only tmpfs: /root, /home, the runner's $HOME, and the home of every
// account in /etc/passwd outside the system's own folders (postgres' /var/lib/postgresql, backup's
// /var/backups with its shadow.bak). What commands legitimately read there is bound back
// read-only, an allowlist rather than a list of secrets (unknown credential files stay hidden):
// the shell's and git's configuration in $HOME (commands run a login shell; git needs who commits),
// toolchains installed under $HOME, and the folders of PATH inside a masked home. Known secrets of
// the system (shadow files, SSH host keys, TLS private keys, container and cluster secrets) read
// as empty or empty folders. The workspace stays visible even inside a masked home (sandbox.ts).
// What is bound back may hold secrets of its own (`export GITHUB_TOKEN=…` in ~/.bashrc, a token
// in a URL of ~/.gitconfig, `TOKEN=…` in a script of ~/.local/bin): its configuration files and
// the scripts of its PATH folders are bound as redacted copies (home-redact.ts), credential files
// inside its toolchain folders are not shown, and its folders are shown entry by entry on a tmpfs
// of the sandbox's own (home-open.ts), so no host rename can swap a raw file in under a mask.
import { accessSync, constants, lstatSync, readdirSync, readFileSync, realpathSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { basename, delimiter, join } from "node:path";
import { matches, openFolders, patternFolders } from "./home-open";
import { copiesFolder, redactedCopy, sweepStaleCopies } from "./home-redact";

export interface HostSecrets {
  /** Folders (empty tmpfs) and files (/dev/null) to mask, as real paths. */
  hide: string[];
  /** Paths inside those folders bound back read-only. */
  reveal: string[];
  /** Redacted copies (`source`, runner-private) bound read-only over files of `reveal` (`target`). */
  substitute: { source: string; target: string }[];
  /** Links inside what is revealed, made again as they are (`target` is the link's text). */
  links: { target: string; at: string }[];
}

/**
 * Of the runner's $HOME, what commands need: the login shell's and git's configuration, and
 * toolchains a user installs there (rustup, nvm, pyenv…). Its files are seen redacted, its
 * folders' configuration files too (REDACTED_INSIDE); a secret elsewhere in a toolchain folder
 * under a name not listed here stays readable.
 */
export const HOME_REVEAL = [
  ".profile",
  ".bash_profile",
  ".bash_login",
  ".bashrc",
  ".bash_aliases",
  ".bash_logout",
  ".inputrc",
  ".gitconfig",
  ".config/git",
  ".cargo",
  ".rustup",
  ".nvm",
  ".pyenv",
  ".rbenv",
  ".volta",
  ".bun",
  ".deno",
  ".asdf",
  ".fnm",
  ".sdkman",
  ".local/bin",
  ".local/lib",
  "go",
  ".nix-profile",
];

/** Credential files inside what is revealed: masked again. */
const REVEALED_SECRETS = [
  ".cargo/credentials",
  ".cargo/credentials.toml",
  // git's credential store looks here as well as in ~/.git-credentials.
  ".config/git/credentials",
];

/** Revealed folders whose every file is seen redacted (ELF executables as they are), no subfolder. */
const REDACTED_ALL = [".config/git", ".local/bin"];

/** Configuration files inside revealed folders, seen redacted (`*`: any one name). */
const REDACTED_INSIDE = [
  ".cargo/config",
  ".cargo/config.toml",
  // npm's global configuration (prefix/etc/npmrc) of each Node a version manager installed.
  ".nvm/versions/node/*/etc/npmrc",
  ".volta/tools/image/node/*/etc/npmrc",
  ".fnm/node-versions/*/installation/etc/npmrc",
  ".asdf/installs/nodejs/*/etc/npmrc",
  ".local/etc/npmrc",
  // pip's site configuration (sys.prefix/pip.conf) of each Python pyenv installed.
  ".pyenv/versions/*/pip.conf",
  ".bun/bunfig.toml",
];

/** Names of configuration files in any revealed folder, at its top, seen redacted. */
const REDACTED_NAMES = [".npmrc", "npmrc", "pip.conf", ".env", "bunfig.toml", "settings.xml", "gradle.properties"];

/** Names of credential files in any revealed folder, at its top: masked. */
const MASKED_NAMES = [".netrc", ".git-credentials", ".pypirc", "credentials", "credentials.json"];

/** The system's own secrets: files read as empty, folders as empty folders. */
const SYSTEM_SECRETS = [
  "/etc/shadow",
  "/etc/shadow-",
  "/etc/gshadow",
  "/etc/gshadow-",
  "/etc/security/opasswd",
  "/etc/ssl/private",
  "/etc/pki/tls/private",
  "/etc/letsencrypt",
  "/etc/krb5.keytab",
  "/etc/mysql/debian.cnf",
  "/etc/ipsec.secrets",
  "/etc/ppp/chap-secrets",
  "/etc/ppp/pap-secrets",
  "/etc/wireguard",
  "/etc/NetworkManager/system-connections",
  "/etc/kubernetes",
  "/etc/rancher",
  "/etc/docker/key.json",
  "/etc/sssd",
  "/etc/openvpn",
  "/etc/libvirt/secrets",
  "/etc/exim4/passwd.client",
  "/etc/postfix/sasl_passwd",
  "/etc/davfs2/secrets",
  "/var/cache/debconf/passwords.dat",
  "/var/lib/sss",
  "/var/lib/samba/private",
  "/var/lib/cloud",
  // systemd's credentials, docker's and Kubernetes' secrets (/var/run is a link here), the users'
  // runtime folders (keyrings, agents).
  "/run/credentials",
  "/run/secrets",
  "/run/user",
  "/var/lib/docker",
  "/var/lib/containerd",
  "/var/lib/kubelet",
  "/var/lib/mysql",
  "/var/lib/postgresql",
  "/var/lib/private",
  "/var/backups",
  "/var/log",
  "/var/mail",
  "/var/spool/cron",
];

/** A passwd home here or below is the system's own (/bin, /dev, /run/sshd…), never masked. */
const SYSTEM_DIRS = ["/bin", "/sbin", "/usr", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/dev", "/proc", "/sys"];
// Also /run: resolv.conf may be a link into /run/systemd (a home on some systems); nothing there is a home's.
const NEVER_MASKED = [...SYSTEM_DIRS, "/run", "/tmp", "/boot", "/nonexistent"];

const within = (path: string, dir: string) => path === dir || path.startsWith(dir === "/" ? "/" : `${dir}/`);

function real(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

const exists = (path: string) => {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
};

/** bwrap fails to start on a bind it cannot read: only what the runner's user can read is bound back. */
const readable = (path: string) => {
  try {
    accessSync(path, constants.R_OK);
    return true;
  } catch {
    return false;
  }
};

/** The home folders in the text of /etc/passwd (the 6th field). */
export function passwdHomes(text: string): string[] {
  return text
    .split("\n")
    .map((line) => line.split(":")[5])
    .filter((h): h is string => !!h?.startsWith("/"));
}

export interface HostSecretsInput {
  /** The runner's $HOME: what commands see as theirs (default: $HOME, else the passwd home). */
  home?: string;
  /** The text of /etc/passwd. */
  passwd?: string;
  /** The runner's PATH: its folders inside a masked home are bound back. */
  path?: string;
  /** The runner's own key (runner/identity-key.ts; default: QUIVER_RUNNER_KEY_FILE), masked wherever it is. */
  keyFile?: string;
  /** The sandbox's workspace: what lies in it inside the same home is its own, shown writable. */
  workspace?: string;
}

function readPasswd(): string {
  try {
    return readFileSync("/etc/passwd", "utf8");
  } catch {
    return "";
  }
}

/** What to mask and what to bind back in it, read from the host as it is now. */
export function hostSecrets(o: HostSecretsInput = {}): HostSecrets {
  sweepStaleCopies();
  const home = o.home ?? process.env.HOME ?? homedir();
  const path = (o.path ?? process.env.PATH ?? "").split(delimiter).filter((p) => p.startsWith("/"));
  const realPath = path.map(real).filter((p): p is string => !!p);
  const homeReal = real(home);
  const found = new Set<string>();
  for (const h of ["/root", "/home", home, ...passwdHomes(o.passwd ?? readPasswd())]) {
    const r = real(h);
    if (!r || r === "/" || NEVER_MASKED.some((s) => within(r, s))) continue;
    // A service's home that holds a PATH folder (/opt as a home) is the system's, not a user's
    // (the runner's own home and /root, /home are masked all the same: their PATH folders are revealed).
    if (r !== homeReal && h !== "/root" && h !== "/home" && realPath.some((p) => within(p, r))) continue;
    found.add(r);
  }
  // /home/alice inside /home needs no tmpfs of its own.
  const homes = [...found].filter((h) => ![...found].some((o) => o !== h && within(h, o)));
  const reveal = new Set<string>();
  if (homeReal && found.has(homeReal))
    for (const rel of HOME_REVEAL) if (readable(join(homeReal, rel))) reveal.add(join(homeReal, rel));
  // A PATH folder inside a home, never a home itself (PATH=~:… would show all of it).
  const pathDirs = new Set(realPath.filter((p) => !found.has(p) && homes.some((h) => within(p, h)) && readable(p)));
  for (const p of pathDirs) reveal.add(p);
  // In the workspace, inside the home that holds both: the workspace's own, bound writable.
  const w = o.workspace;
  const own = (p: string) => !!w && within(p, w) && homes.some((h) => within(p, h) && within(w, h));
  const hide = [...homes];
  for (const p of SYSTEM_SECRETS) if (exists(p)) hide.push(real(p) ?? p);
  if (homeReal) for (const rel of REVEALED_SECRETS) if (exists(join(homeReal, rel))) hide.push(join(homeReal, rel));
  hide.push(...sshHostKeys());
  // Whoever reads it can connect as this runner: masked even outside a home (--key-file /etc/…).
  const keyFile = o.keyFile ?? process.env.QUIVER_RUNNER_KEY_FILE;
  if (keyFile && exists(keyFile)) hide.push(real(keyFile) ?? keyFile);
  const shown = [...reveal].filter((r) => !own(r));
  const dirs = shown.filter((r) => !isFile(r));
  const roots = dirs.filter((d) => !dirs.some((o) => o !== d && within(d, o)));
  const inner = dirs.filter((d) => !roots.includes(d));
  if (homeReal) for (const rel of REDACTED_INSIDE) inner.push(...patternFolders(homeReal, rel).filter((d) => !own(d)));
  const opened = openFolders({
    roots,
    inner: inner.filter((d) => roots.some((r) => within(d, r))),
    redactAll: (d) => pathDirs.has(d) || (!!homeReal && REDACTED_ALL.some((rel) => join(homeReal, rel) === d)),
    masked: (f) =>
      MASKED_NAMES.includes(basename(f)) || (!!homeReal && REVEALED_SECRETS.some((rel) => join(homeReal, rel) === f)),
    redacted: (f) =>
      REDACTED_NAMES.includes(basename(f)) || (!!homeReal && REDACTED_INSIDE.some((rel) => matches(homeReal, rel, f))),
  });
  hide.push(...opened.folders);
  const substitute: HostSecrets["substitute"] = [...opened.substitute];
  // A link to what is masked (planted through a workspace inside the home: ~/.bashrc -> ~/project/x
  // -> /etc/shadow) is not read: only the own home's files, or what no mask covers.
  const refused = (f: string) => {
    const r = real(f);
    if (!r || ["/proc", "/sys", "/dev"].some((d) => within(r, d))) return true;
    return hide.some((h) => within(r, h) && !(homeReal && within(homeReal, h) && within(r, homeReal)));
  };
  // A revealed file is bound only as its copy, on the home's tmpfs (sandbox.ts: a rename on the
  // host detaches a mount stacked over the original's, showing the original); unchecked is unseen.
  for (const target of shown.filter(isFile)) {
    const source = refused(target) ? undefined : redactedCopy(target);
    if (source) substitute.push({ source, target });
  }
  // The copies' folder, unless the sandbox's private /tmp covers it already.
  if (substitute.length && !within(copiesFolder(), "/tmp")) hide.push(copiesFolder());
  return { hide: [...new Set(hide)], reveal: opened.reveal, substitute, links: opened.links };
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** The SSH server's private host keys (/etc/ssh/ssh_host_*_key). */
function sshHostKeys(): string[] {
  try {
    return readdirSync("/etc/ssh")
      .filter((n) => /^ssh_host_.*_key$/.test(n))
      .map((n) => `/etc/ssh/${n}`);
  } catch {
    return [];
  }
}
