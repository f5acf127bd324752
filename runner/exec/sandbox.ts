// Where commands run: inside bubblewrap when it is installed and works (workspace writable, the
// rest read-only, /dev too, a private /tmp and /dev/shm bounded by the memory limit, own PID namespace, no network unless granted and then the
// workspace's namespace without the host's loopback (netns.ts), dies with the runner, nothing
// of Quiver's visible: its data, source and install folders masked, nor the host's secrets: its
// homes, shadow files and the like masked too (host-secrets.ts), no CAP_SYS_ADMIN to unmask
// them, no setuid, setgid or file capability on what it writes: a seccomp filter, seccomp.ts),
// else directly with a report that the runner is unsandboxed, which off loopback must be chosen
// (checkUnsandboxed).
import { spawnSync } from "node:child_process";
import { accessSync, constants, statSync } from "node:fs";
import { delimiter, join } from "node:path";
import type { RunnerSandbox } from "../../server/protocol/runner";
import { coverArgs, hostSockets, vanishedCover } from "./host-sockets";
import { hostSecrets } from "./host-secrets";
import { noSuidFilter } from "./seccomp";

export type SandboxMode = "auto" | "off" | "require";

export interface SandboxInfo extends RunnerSandbox {
  /** Absolute path of bwrap when kind is "bubblewrap". */
  bwrap?: string;
  /** Why the sandbox is unavailable, for logs and the UI. */
  reason?: string;
}

export interface SandboxSpec {
  /** Absolute real path of the workspace root (bound writable). */
  workspace: string;
  /** Working directory inside the workspace. */
  cwd: string;
  network: boolean;
  /**
   * With network: the argv prefix that enters the workspace's network namespace (netns.ts) before
   * bubblewrap starts. Network without it is the host's (only by explicit choice).
   */
  enter?: string[];
  /** With `enter`: a resolv.conf bound at `at` (the host's own names a resolver on its loopback). */
  resolvConf?: { file: string; at: string };
  /** setsid inside the sandbox: right for commands, wrong for a PTY that needs its terminal. */
  newSession: boolean;
  /**
   * Paths inside masked folders bound back read-only before `readOnly` (what commands need of a
   * masked home: host-secrets.ts); bwrapArgs adds the host's own to what a caller gives.
   */
  reveal?: string[];
  /**
   * Files bound read-only from `source` at `target` with `reveal` (the home's files as redacted
   * copies). One over a tmpfs is its own mount point: a host that replaces the original by a
   * rename (editors do) detaches every mount stacked on the original's, never this one.
   */
  substitute?: { source: string; target: string }[];
  /** Links made with `substitute` (a revealed folder's, shown entry by entry: home-open.ts). */
  links?: { target: string; at: string }[];
  /**
   * Files or folders bound read-only after the masks: what the sandbox itself needs of Quiver
   * (the exec server's bundle), even inside a masked folder or the private /tmp.
   */
  readOnly?: string[];
  /** The workspace bound read-only (a helper with the host's network: the network git writes
   *  only the private repository it is given in `writable`). */
  workspaceReadOnly?: boolean;
  /**
   * Folders bound writable after the workspace (the runner's own git on a shadow repository kept
   * outside the workspace: runner/checkpoints/). Never given to the agent's commands.
   */
  writable?: string[];
  /**
   * Absolute real paths of folders no command may see (Quiver's data folder, its source and
   * install): each is covered by an empty read-only tmpfs. The workspace stays visible and
   * writable even when it lies inside one; a mask inside the workspace is applied over it. A file
   * here (the server's MCP configuration) reads as empty (/dev/null over it).
   */
  hide?: string[];
  /**
   * Keep CAP_SYS_ADMIN in the sandbox (default: dropped): for the warm sandbox's exec server, which
   * gives each command a PID namespace and /proc of its own, then drops it (DROP_MOUNT_CAP).
   */
  keepMountCap?: boolean;
  /**
   * A seccomp program bwrap reads from this descriptor and applies to the command instead of
   * noSuidFilter: one of seccomp.ts's, which all include it (bwrap before 0.5 takes one program).
   */
  seccompFd?: number;
  /**
   * The memory limit of what runs in the sandbox (limits.ts), which bounds its memory-backed
   * folders too: /tmp holds at most half of it and /dev/shm a quarter (tmpfs is otherwise half
   * the machine's RAM each, and without cgroups nothing else counts it). Absent or 0: unbounded.
   */
  memoryBytes?: number;
}

export function findOnPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      /* keep looking */
    }
  }
  return undefined;
}

/** A sandbox setting the runner refuses to start with (exit code 2, not a crash). */
export class SandboxConfigError extends Error {}

const probes = new Map<SandboxMode, SandboxInfo>();

const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|::1|::ffff:127(\.\d{1,3}){3})$/i;

/** Whether a host name or address (URL brackets allowed) is this machine's loopback. */
export function isLoopback(host: string): boolean {
  return LOOPBACK.test(host.replace(/^\[|\]$/g, ""));
}

/**
 * Running unsandboxed must be chosen: where bubblewrap is missing or broken under `auto` and
 * the server listens off loopback (HOST) or this runner reaches it over the network, the runner
 * refuses to start, naming the cause and the opt-out. On loopback it runs, and says so (the
 * IDE's banner shows `reason`).
 */
export function checkUnsandboxed(
  mode: SandboxMode,
  info: SandboxInfo,
  where: { host?: string; serverUrl: string },
): void {
  if (info.available || mode !== "auto") return;
  const host = where.host || "127.0.0.1";
  let server: string;
  try {
    server = new URL(where.serverUrl).hostname;
  } catch {
    server = "";
  }
  const exposed = !isLoopback(host)
    ? `the server listens on ${host} (HOST)`
    : !isLoopback(server)
      ? `the server is reached at ${server}`
      : undefined;
  if (!exposed) return;
  throw new SandboxConfigError(
    `refusing to run commands unsandboxed because ${exposed}, off loopback, and ${info.reason ?? "the sandbox is unavailable"}; ` +
      "install bubblewrap (apt-get install bubblewrap), or set QUIVER_SANDBOX=off to run commands with the runner's full rights on purpose",
  );
}

/**
 * Whether commands will be sandboxed, probed once per mode: bwrap can be installed and still
 * fail (no user namespaces in a container), so it is tried for real.
 */
export function sandboxInfo(mode: SandboxMode = "auto"): SandboxInfo {
  const cached = probes.get(mode);
  if (cached) return cached;
  const info = probe(mode);
  if (mode === "require" && !info.available) {
    throw new SandboxConfigError(`sandbox required but unavailable: ${info.reason ?? "unknown reason"}`);
  }
  probes.set(mode, info);
  return info;
}

function probe(mode: SandboxMode): SandboxInfo {
  if (mode === "off") return { available: false, kind: "none", reason: "disabled by configuration" };
  if (process.platform !== "linux")
    return { available: false, kind: "none", reason: `not supported on ${process.platform}` };
  const bwrap = findOnPath("bwrap");
  if (!bwrap) return { available: false, kind: "none", reason: "bubblewrap (bwrap) is not installed" };
  // With the seccomp filter (sandboxed commands run under one), so a kernel that refuses it says so here.
  const trial = () => {
    const cmd = bwrapArgs(bwrap, { workspace: "/tmp", cwd: "/tmp", network: false, newSession: true }, ["true"]);
    const r = spawnSync(cmd.file, cmd.args, { stdio: ["ignore", "ignore", "pipe"], timeout: 10_000 });
    return { r, vanished: r.status !== 0 && vanishedCover(r.stderr?.toString() ?? "", cmd.args) };
  };
  // Once more when a host socket went away between the listing and the mount (host-sockets.ts).
  const first = trial();
  const { r } = first.vanished ? trial() : first;
  if (r.status !== 0) {
    const why = r.error?.message ?? (r.stderr?.toString().trim() || `exit ${r.status ?? r.signal}`);
    return { available: false, kind: "none", reason: `bwrap does not work here: ${why}` };
  }
  return { available: true, kind: "bubblewrap", bwrap };
}

/** The bwrap command line that runs `argv` under `spec`. */
export function bwrapArgs(bwrap: string, given: SandboxSpec, argv: string[]): { file: string; args: string[] } {
  // The host's homes and secrets (host-secrets.ts) are masked like Quiver's folders.
  const host = hostSecrets({ workspace: given.workspace });
  // What the home shows again (host-secrets.ts), never inside a mask of Quiver's.
  const ours = (p: string) => (given.hide ?? []).some((m) => p === m || inside(p, m));
  const spec = {
    ...given,
    hide: [...(given.hide ?? []), ...host.hide],
    reveal: [...(given.reveal ?? []), ...host.reveal.filter((r) => !ours(r))],
    substitute: host.substitute.filter(({ target }) => !ours(target)),
    links: host.links.filter(({ at }) => !ours(at)),
  };
  const hidden = (s: string) =>
    host.hide.some((m) => s === m || inside(s, m)) && !host.reveal.some((r) => inside(s, r));
  const args = [
    "--ro-bind",
    "/",
    "/",
    "--dev",
    "/dev",
    ...sized(bwrap, spec.memoryBytes, 4),
    "--tmpfs",
    "/dev/shm",
    "--proc",
    "/proc",
    // /tmp first: the workspace may itself live under /tmp and must stay visible.
    ...sized(bwrap, spec.memoryBytes, 2),
    "--tmpfs",
    "/tmp",
    ...mountArgs(spec),
    // The host's Unix sockets still connect through a read-only bind: each is covered (host-sockets.ts).
    // (Those in a masked home are hidden already, unless it is bound back: hostSecrets' reveal.)
    ...coverArgs(hostSockets([spec.workspace, ...(given.hide ?? [])]).filter((s) => !hidden(s))),
    // bwrap's /dev is a tmpfs of its own, writable and unbounded: nothing needs to write there but
    // /dev/shm (its own, bounded, above) and the devices (mounts of their own, still writable).
    "--remount-ro",
    "/dev",
    // A user namespace even when the runner is root: capabilities then hold only inside it and the
    // mounts above stay locked, so `mount -o remount,rw /` fails instead of undoing the sandbox.
    "--unshare-user",
    // The masks and the workspace bind are made inside that namespace, so they are not locked:
    // with CAP_SYS_ADMIN there, `umount` of a mask showed what it hides. Without it, no mount or
    // umount; a nested user namespace (unshare -r) gets the capability back, but only over a copy
    // in which every mount is locked. (The warm sandbox keeps it and drops it per command.)
    ...(spec.keepMountCap ? [] : ["--cap-drop", "CAP_SYS_ADMIN"]),
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--die-with-parent",
  ];
  if (!spec.network) args.push("--unshare-net");
  if (spec.newSession) args.push("--new-session");
  // No setuid, setgid or file capability on anything the sandbox writes (seccomp.ts).
  const filter = spec.seccompFd === undefined ? noSuidFilter() : undefined;
  if (spec.seccompFd !== undefined) args.push("--seccomp", String(spec.seccompFd));
  else if (filter) args.push("--seccomp", String(FILTER_FD));
  // Entered as root of the namespace's user namespace (a runner that is not root): its own uid inside.
  if (spec.network && spec.enter?.length) {
    args.push("--uid", String(process.getuid?.() ?? 0), "--gid", String(process.getgid?.() ?? 0));
    if (spec.resolvConf) args.push("--ro-bind", spec.resolvConf.file, spec.resolvConf.at);
  }
  args.push("--chdir", spec.cwd, "--", ...argv);
  const run = spec.network && spec.enter?.length ? [...spec.enter, bwrap, ...args] : [bwrap, ...args];
  const full = filter ? [...feedFilter(filter), ...run] : run;
  return { file: full[0], args: full.slice(1) };
}

/** `--size` for the next tmpfs: `1/share` of the memory limit, where bwrap knows the option (0.8+). */
function sized(bwrap: string, memoryBytes: number | undefined, share: number): string[] {
  if (!memoryBytes || !tmpfsSizeKnown(bwrap)) return [];
  return ["--size", String(Math.max(1024 * 1024, Math.floor(memoryBytes / share)))];
}

const sizeKnown = new Map<string, boolean>();

/** Whether this bwrap takes `--size` (older ones refuse the whole command line over it). */
export function tmpfsSizeKnown(bwrap: string): boolean {
  let known = sizeKnown.get(bwrap);
  if (known === undefined) {
    const help = spawnSync(bwrap, ["--help"], { encoding: "utf8", timeout: 10_000 });
    known = /^\s*--size\b/m.test(`${help.stdout ?? ""}${help.stderr ?? ""}`);
    sizeKnown.set(bwrap, known);
  }
  return known;
}

/** Where bwrap reads the filter that feedFilter hands it. */
const FILTER_FD = 9;

/**
 * The argv prefix that gives bwrap `filter` on FILTER_FD: a bash, outside the sandbox and every
 * namespace, that pipes it there and execs the rest (bwrap reads it, then closes it). A prefix
 * and not a descriptor of the spawn, so it works whoever spawns: node-pty passes none.
 */
function feedFilter(filter: Buffer): string[] {
  const escaped = [...filter].map((b) => `\\x${b.toString(16).padStart(2, "0")}`).join("");
  // Two steps: `exec "$@" 9< <(…)` would also leave the substitution's own descriptor open in
  // bwrap. The wait (the filter fits a pipe's buffer, so printf ends unread) keeps printf from
  // becoming bwrap's child, which a terminal's leader would take for the sandbox (launch.ts).
  // First, every descriptor but stdio is closed: bwrap passes on whatever it is given, and a
  // descriptor the runner inherited without close-on-exec (from its launcher, a CI's pipe, a
  // service manager's socket) would otherwise reach every command and terminal in the sandbox.
  const close = 'for f in /proc/self/fd/*; do f=${f##*/}; [ "$f" -gt 2 ] && eval "exec $f>&-"; done';
  const script = `${close}; exec ${FILTER_FD}< <(printf %b "$0"); wait $!; exec "$@"`;
  return [findOnPath("bash") ?? "bash", "--norc", "--noprofile", "-c", script, escaped];
}

const inside = (path: string, dir: string) => path.startsWith(dir.endsWith("/") ? dir : `${dir}/`);

/**
 * The masks, read-only binds and the workspace, in the order bwrap must apply them: a later
 * mount covers an earlier one, so masks around the workspace go first, what is revealed in them
 * and the read-only binds next, the workspace is bound into them, masks inside the workspace
 * come after it (with what is revealed in those), and a mask inside a revealed or read-only bind
 * is laid again over that bind. A mask that is the workspace itself cannot hide it and is skipped.
 */
export function mountArgs(spec: SandboxSpec): string[] {
  const w = spec.workspace;
  const readOnly = spec.readOnly ?? [];
  const masked = [...new Set(spec.hide ?? [])].filter((m) => m !== w && m !== "/");
  const files = masked.filter(isFile);
  const hide = masked.filter((m) => !files.includes(m)).sort((a, b) => a.length - b.length);
  const outer = hide.filter((m) => !inside(m, w));
  const inner = hide.filter((m) => inside(m, w));
  // Revealed: only what a mask covers (the workspace shows its own), bound after that mask.
  const reveal = (spec.reveal ?? []).filter((r) => r !== w && !inside(r, w) && outer.some((m) => inside(r, m)));
  const revealInner = (spec.reveal ?? []).filter((r) => inner.some((m) => inside(r, m)));
  const substitute = (spec.substitute ?? []).filter(
    ({ target }) => !inside(target, w) && outer.some((m) => inside(target, m)),
  );
  const substituteInner = (spec.substitute ?? []).filter(({ target }) => inner.some((m) => inside(target, m)));
  const links = (spec.links ?? []).filter(({ at }) => !inside(at, w) && outer.some((m) => inside(at, m)));
  const linksInner = (spec.links ?? []).filter(({ at }) => inner.some((m) => inside(at, m)));
  const copies = (s: { source: string; target: string }[]) => s.flatMap((c) => ["--ro-bind", c.source, c.target]);
  const symlinks = (s: { target: string; at: string }[]) => s.flatMap((l) => ["--symlink", l.target, l.at]);
  const tmpfs = (dirs: string[]) => dirs.flatMap((m) => ["--tmpfs", m]);
  const roBind = (paths: string[]) => paths.flatMap((p) => ["--ro-bind", p, p]);
  // A revealed entry the host removed since it was listed is left out rather than failing the start.
  const roBindTry = (paths: string[]) => paths.flatMap((p) => ["--ro-bind-try", p, p]);
  const shown = [...reveal, ...revealInner, ...readOnly, w, ...(spec.writable ?? [])];
  return [
    ...tmpfs(outer),
    ...roBindTry(reveal),
    ...copies(substitute),
    ...symlinks(links),
    ...tmpfs(outer.filter((m) => reveal.some((r) => inside(m, r)))),
    ...roBind(readOnly),
    ...tmpfs(outer.filter((m) => readOnly.some((r) => inside(m, r)))),
    spec.workspaceReadOnly ? "--ro-bind" : "--bind",
    w,
    w,
    ...(spec.writable ?? []).flatMap((p) => ["--bind", p, p]),
    ...tmpfs(inner),
    ...roBindTry(revealInner),
    ...copies(substituteInner),
    ...symlinks(linksInner),
    // Read-only last: bwrap creates the mount points of the binds above inside these tmpfs.
    ...hide.flatMap((m) => ["--remount-ro", m]),
    // A file to hide reads as empty, unless a masked folder hides it already (and nothing bound
    // into that folder shows it again: ~/.cargo/credentials.toml in a revealed ~/.cargo).
    ...files.filter((f) => !deepestIsMask(f, hide, shown)).flatMap((f) => ["--ro-bind", "/dev/null", f]),
  ];
}

/** Whether the innermost mount over `path` (the last applied, in mountArgs' order) is a mask. */
function deepestIsMask(path: string, masks: string[], binds: string[]): boolean {
  const over = (ps: string[]) => Math.max(-1, ...ps.filter((p) => p === path || inside(path, p)).map((p) => p.length));
  const mask = over(masks);
  return mask >= 0 && mask >= over(binds);
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** argv wrapped for the sandbox when there is one, unchanged otherwise. */
export function sandboxed(info: SandboxInfo, spec: SandboxSpec, argv: string[]): { file: string; args: string[] } {
  if (info.available && info.bwrap) return bwrapArgs(info.bwrap, spec, argv);
  return { file: argv[0], args: argv.slice(1) };
}

/**
 * The argv prefix that takes CAP_SYS_ADMIN out of the bounding set before a command runs in a
 * sandbox that kept it (so it cannot umount a mask); empty where setpriv is missing.
 */
export function dropMountCap(): string[] {
  const setpriv = findOnPath("setpriv");
  return setpriv ? [setpriv, "--bounding-set", "-sys_admin", "--"] : [];
}

/** Caches of package managers point into the private /tmp: $HOME is read-only in the sandbox. */
export const SANDBOX_ENV: Record<string, string> = {
  XDG_CACHE_HOME: "/tmp/.cache",
  npm_config_cache: "/tmp/.npm",
};
