// What the network git (git-remote.ts) is given of the runner's surroundings, decided by the
// runner alone. Its PATH: the network git runs with the host's network and the credential on a
// descriptor, so a program the agent wrote must never be the one it runs; a PATH folder inside
// the workspace (npm puts the project's node_modules/.bin first for a runner started by an npm
// script in the project it serves) or a relative one (`.`, an empty entry: the current folder,
// which is the workspace when bwrap starts git) would make the agent's `git`, `sh` or `cat` —
// the credential helper's, reading the token — that program. And the CA bundles the operator
// set, which may lie in a folder the sandbox masks (a home): they are bound back read-only, each
// path alone, never one the workspace's configuration names.
import { execFile } from "node:child_process";
import { statSync } from "node:fs";
import { isAbsolute } from "node:path";
import { promisify } from "node:util";
import { inside, lookup, real, safePath as safePathOf } from "../safe-path";

export { lookup };

/** `path` without relative entries and folders inside `workspace` (../safe-path.ts). */
export const safePath = (path: string | undefined, workspace: string | undefined): string =>
  safePathOf(path, [workspace]);

/** The runner's own environment variables naming CA bundles (files or folders). */
const CA_ENV = ["SSL_CERT_FILE", "SSL_CERT_DIR", "GIT_SSL_CAINFO", "GIT_SSL_CAPATH"];
/** Keys of the runner's own git configuration (global and system files, no includes) naming them. */
const CA_CONFIG = ["http.sslCAInfo", "http.sslCAPath"];

export interface OperatorCa {
  /** Existing absolute paths to bind read-only into the network git's sandbox. */
  paths: string[];
  /** `-c` settings for the network git, which reads no global or system configuration. */
  config: string[];
}

async function ownConfig(key: string, path: string): Promise<string | undefined> {
  // --global and --system name their files, so git reads no repository's configuration (it
  // runs in `/`) and follows no include the runner's files hold (--includes is off for them).
  // Outside any sandbox: git is looked up only where the agent cannot write.
  for (const scope of ["--global", "--system"]) {
    const r = await promisify(execFile)(lookup("git", path), ["config", scope, "--get", key], {
      cwd: "/",
      env: { ...process.env, PATH: path, GIT_CONFIG_PARAMETERS: undefined, GIT_CONFIG_COUNT: undefined },
    }).catch(() => undefined);
    const v = r?.stdout.trim();
    if (v) return v;
  }
  return undefined;
}

// Read again at most every half minute: an operation runs git several times, each asking.
const OWN_TTL_MS = 30_000;
let ownRead: { at: number; key: string; values: Promise<[string, string | undefined][]> } | undefined;
function ownCa(path: string): Promise<[string, string | undefined][]> {
  // Where git looks for the files decides what they are.
  const key = JSON.stringify([path, ...["HOME", "XDG_CONFIG_HOME", "GIT_CONFIG_GLOBAL"].map((k) => process.env[k])]);
  if (!ownRead || ownRead.key !== key || Date.now() - ownRead.at > OWN_TTL_MS)
    ownRead = {
      key,
      at: Date.now(),
      values: Promise.all(
        CA_CONFIG.map(async (k): Promise<[string, string | undefined]> => [k, await ownConfig(k, path)]),
      ),
    };
  return ownRead.values;
}

const exists = (p: string) => {
  try {
    statSync(p);
    return true;
  } catch {
    return false;
  }
};

/** The CA bundles the operator set for the runner: its environment, then its own git configuration. */
export async function operatorCa(workspace: string | undefined): Promise<OperatorCa> {
  const ws = workspace ? [workspace, real(workspace)].filter((w): w is string => !!w) : [];
  // Never one inside the workspace: the agent could swap it for anything between two operations.
  const usable = (p: string | undefined): p is string =>
    !!p && isAbsolute(p) && exists(p) && !ws.some((w) => inside(p, w) || inside(real(p) ?? p, w));
  const paths = CA_ENV.map((k) => process.env[k]).filter(usable);
  const config: string[] = [];
  const own = await ownCa(safePath(process.env.PATH, workspace));
  for (const [key, v] of own) {
    if (usable(v)) {
      paths.push(v);
      config.push(`${key}=${v}`);
    }
  }
  return { paths: [...new Set(paths)], config };
}

/**
 * The argv prefix that closes every descriptor above `keep` and execs the rest: bwrap hands on
 * all it is given, and a descriptor the runner inherited without close-on-exec (a launcher's
 * pipe, a service manager's socket) would reach the networked git. sandbox.ts does the same for
 * the sandboxes whose seccomp program it feeds itself.
 */
export function closeAbove(keep: number, bash: string): string[] {
  const close = `for f in /proc/self/fd/*; do f=\${f##*/}; [ "$f" -gt ${keep} ] && eval "exec $f>&-"; done; exec "$@"`;
  return [bash, "--norc", "--noprofile", "-c", close, "bash"];
}
