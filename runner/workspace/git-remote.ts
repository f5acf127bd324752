// git's network half, kept away from the workspace: every clone, fetch and push runs in a
// private bare repository the runner makes for that one operation (a fresh folder under the
// runner's /tmp, which the sandbox replaces with its own), never in the workspace's repository.
// So none of the workspace's configuration — which the agent can write: url.insteadOf, proxies,
// sslVerify/sslCAInfo per URL, credential helpers that would be handed the token to "store" —
// is read by the git that holds the token. Objects cross between the two through a pipe (a pack,
// see git-remote-sync.ts), and the private repository reads the workspace's objects through an
// alternate to push them (never the alternates or links the workspace's own object folder names).
// The token reaches git only through a credential helper that reads it from a pipe on fd 3 and
// answers only for the URL's own protocol and host; it is in no argument, no environment
// variable, no file, and it is scrubbed from anything git prints.
//
// The alternate is followed by path, and the agent can swap a link into the workspace's object
// folder at any moment (`.git/objects/pack` -> another workspace's). So with a sandbox, every git
// on a private repository runs in the workspace's commands' sandbox (netSpawn): same masks, but
// the host's network, the private repository writable and the workspace read-only. A link
// planted there resolves where other tenants' folders, the checkpoints and the host's secrets
// are not, whenever it appears. Nothing that git runs is looked up where the agent can write
// (git-remote-env.ts: PATH), so every program in that sandbox is the runner's.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { GitCredentialInput, RemoteUrl } from "../../server/protocol/git-remote";
import { noSuidFilter } from "../exec/seccomp";
import type { GitHost } from "./git";
import { closeAbove, lookup, operatorCa, safePath } from "./git-remote-env";

export interface NetGitResult {
  code: number;
  stdout: string;
  /** git's messages, with the token (should it ever appear) replaced by `***`. */
  stderr: string;
}

// Reads the attributes git sends, answers `get` only for the expected protocol and host — and,
// for a credential scoped to a repository path (server/protocol/git-scope.ts), only for a path
// under it with no "." or ".." part, so a redirect to another path on the host gets nothing — and
// copies the token from fd 3 (a pipe the runner wrote and closed). `store` and `erase` are
// ignored: nothing is kept.
const HELPER =
  '!f() { test "$1" = get || exit 0; p=; h=; a=; while IFS== read -r k v; do test -n "$k" || break; case "$k" in protocol) p=$v;; host) h=$v;; path) a=$v;; esac; done; ' +
  'test "$p" = "$QUIVER_GIT_PROTOCOL" && test "$h" = "$QUIVER_GIT_HOST" || exit 0; ' +
  's=$QUIVER_GIT_SCOPE; if test -n "$s"; then case "/$a/" in *//*|*/./*|*/../*|*%*) exit 0;; esac; ' +
  'case "$a" in "$s"|"$s.git"|"$s"/*) ;; *) exit 0;; esac; fi; ' +
  "printf 'username=%s\\npassword=' \"$QUIVER_GIT_USER\"; cat <&3; printf '\\n'; }; f";

// Fixed settings of the private repository's git: only this helper, no prompts, no hooks.
const CONFIG = [
  "credential.helper=",
  `credential.helper=${HELPER}`,
  // git tells the helper the path (after a redirect too): a scoped credential needs it.
  "credential.useHttpPath=true",
  "core.askPass=",
  "core.hooksPath=/dev/null",
  "core.fsmonitor=false",
  "core.sshCommand=false",
  // Not `for-each-ref` in each repository it borrows objects from (git-remote-sync.ts): that would
  // read the workspace's refs outside the sandbox, and a fetch sends the remote every commit found
  // there as "have" — another repository's, through a link the agent planted. The workspace's
  // commits are given as refs of the private repository instead.
  "core.alternateRefsCommand=true",
  "protocol.allow=never",
  // A gitlink and .gitmodules the remote sends name other repositories: none is fetched.
  "submodule.recurse=false",
  "fetch.recurseSubmodules=false",
  "http.followRedirects=initial",
  "transfer.fsckObjects=false",
  "gc.auto=0",
  "maintenance.auto=false",
];

/** Env var names of the runner's own that a network git keeps: proxies and CA bundles the operator set. */
const KEEP =
  /^(PATH|LANG|TZ|https?_proxy|HTTPS?_PROXY|no_proxy|NO_PROXY|all_proxy|ALL_PROXY|SSL_CERT_FILE|SSL_CERT_DIR|GIT_SSL_CAINFO|GIT_SSL_CAPATH)$/;

/** A private bare repository for one operation; `dispose` removes it. */
export async function privateRepo(): Promise<{ dir: string; dispose(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), "quiver-git-net-"));
  return { dir, dispose: () => rm(dir, { recursive: true, force: true }) };
}

export interface NetGitOptions {
  remote: RemoteUrl;
  credential?: GitCredentialInput;
  signal: AbortSignal;
  /** Lines of git's progress (stderr), scrubbed. */
  onProgress?(line: string): void;
  /** Input written to git's stdin (then closed). */
  stdin?: string;
  /** The workspace whose commands' sandbox this git runs in (when it has one). */
  host?: GitHost;
}

// Descriptor 3 carries the credential (HELPER); bwrap reads its seccomp program from 4. Given as
// `seccompFd`, the program is not fed by sandbox.ts's prefix, which closes every descriptor above
// 2 and so would close the credential's pipe too; bwrap passes 3 on untouched.
const SECCOMP_FD = 4;

/**
 * Starts `git <args>` on the private repository `home` with `env`: in `host`'s sandbox when it
 * has one (network on, `home` writable, the workspace read-only, `readOnly` bound back, under
 * the no-setuid filter: git-remote-http and the credential helper are processes, so not the
 * runner's no-fork filter), else directly. PATH is the runner's without a folder the agent can
 * write (git-remote-env.ts), and descriptors above 4 are closed before bwrap starts.
 * stdio 0-3 are pipes; the caller writes the credential (or nothing) to 3.
 */
export function netSpawn(
  home: string,
  args: string[],
  env: Record<string, string | undefined>,
  opts: { host?: GitHost; signal: AbortSignal; readOnly?: string[] },
): ChildProcess {
  const path = safePath(env.PATH ?? process.env.PATH, opts.host?.root);
  const argv = [lookup("git", path), "-C", home, ...args];
  const sandbox = opts.host?.helpers.sandboxed ? opts.host.helpers : undefined;
  const seccomp = sandbox ? noSuidFilter() : undefined;
  const cmd = sandbox
    ? sandbox.spawn(
        argv,
        {},
        {
          network: true,
          writable: [home],
          readOnly: opts.readOnly,
          seccompFd: seccomp ? SECCOMP_FD : undefined,
        },
      )
    : { file: argv[0], args: argv.slice(1) };
  const full: Record<string, string | undefined> = { ...env, PATH: path };
  const [file, ...rest] = [...closeAbove(SECCOMP_FD, lookup("bash", path)), cmd.file, ...cmd.args];
  const child = spawn(file, rest, {
    cwd: home,
    env: full as NodeJS.ProcessEnv,
    stdio: ["pipe", "pipe", "pipe", "pipe", seccomp ? "pipe" : "ignore"],
    signal: opts.signal,
    killSignal: "SIGKILL",
  });
  if (seccomp) {
    const fd = child.stdio[SECCOMP_FD] as NodeJS.WritableStream & { on(e: "error", f: () => void): void };
    fd.on("error", () => undefined);
    fd.end(seccomp);
  }
  return child;
}

/**
 * `git <args>` in the private repository `home` (its HOME too: no ~/.netrc, no ~/.gitconfig),
 * with the CA bundles the operator set for the runner (git-remote-env.ts).
 */
export async function netGit(home: string, args: string[], opts: NetGitOptions): Promise<NetGitResult> {
  const ca = await operatorCa(opts.host?.root);
  const env: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(process.env)) if (KEEP.test(k)) env[k] = v;
  Object.assign(env, {
    HOME: home,
    LANG: "C",
    LC_ALL: "C",
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_TERMINAL_PROMPT: "0",
    GIT_ALLOW_PROTOCOL: opts.remote.protocol,
    GIT_PROTOCOL_FROM_USER: "0",
    GIT_OPTIONAL_LOCKS: "0",
    QUIVER_GIT_PROTOCOL: opts.remote.protocol,
    QUIVER_GIT_HOST: opts.remote.host,
    QUIVER_GIT_USER: opts.credential?.username ?? "",
    QUIVER_GIT_SCOPE: opts.credential?.scope ?? "",
  });
  const token = opts.credential?.token;
  const scrub = (text: string) => (token ? text.split(token).join("***") : text);
  return new Promise((resolve) => {
    const child = netSpawn(home, [...[...CONFIG, ...ca.config].flatMap((c) => ["-c", c]), ...args], env, {
      ...opts,
      readOnly: ca.paths,
    });
    // The helper reads fd 3 to its end; with no credential it reads nothing, and git is refused.
    const secret = child.stdio[3] as NodeJS.WritableStream & { on(e: "error", f: () => void): void };
    secret.on("error", () => undefined);
    secret.end(token ?? "");
    child.stdin!.on("error", () => undefined);
    child.stdin!.end(opts.stdin ?? "");
    let stdout = "";
    let stderr = "";
    child.stdout!.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr!.setEncoding("utf8").on("data", (d: string) => {
      stderr += d;
      if (opts.onProgress) for (const line of d.split(/[\r\n]+/)) if (line.trim()) opts.onProgress(scrub(line));
    });
    child.on("error", (err) => resolve({ code: 1, stdout: scrub(stdout), stderr: scrub(`${stderr}${err.message}`) }));
    child.on("close", (code) => resolve({ code: code ?? 1, stdout: scrub(stdout), stderr: scrub(stderr) }));
  });
}

/** git's complaint about a network operation, in the words a person can act on. */
export function explainNetError(stderr: string, remote: RemoteUrl, hadCredential: boolean): string {
  const lines = stderr
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);
  const remoteSays = lines
    .filter((l) => l.startsWith("remote:"))
    .map((l) => l.slice(7).trim())
    .filter((l) => l && !/^Unauthorized$/i.test(l));
  if (
    /Authentication failed|could not read Username|terminal prompts disabled|HTTP 401|HTTP 403|The requested URL returned error: 40[13]/i.test(
      stderr,
    )
  ) {
    return hadCredential
      ? `${remote.host} refused the stored credential: check its user name and token under Settings → Git (a token needs read access to fetch and write access to push).`
      : `${remote.host} asks for a sign-in: store a credential for ${remote.host} under Settings → Git.`;
  }
  if (/\[remote rejected\]|pre-receive hook declined|hook declined/i.test(stderr)) {
    return `The server refused the push${remoteSays.length ? `: ${remoteSays.join("\n")}` : "."}`;
  }
  if (/\[rejected\].*(fetch first|non-fast-forward)|Updates were rejected/i.test(stderr)) {
    return "The remote branch has commits this workspace does not have: pull first, then push again.";
  }
  if (/not found|does not appear to be a git repository|HTTP 404/i.test(stderr))
    return `No repository at ${remote.url} (or the credential cannot see it).`;
  if (/Could not resolve host|Failed to connect|Connection refused|timed out/i.test(stderr))
    return `Could not reach ${remote.host}: ${lines.at(-1) ?? "no answer"}`;
  return lines.slice(-6).join("\n") || "git failed";
}
