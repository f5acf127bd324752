// The host's Unix sockets, covered in every sandbox. A read-only bind of / does not stop a
// connect(): a socket file on a read-only mount still connects, so without this a sandboxed
// command (network or not) reached PostgreSQL's /run/postgresql socket with trust auth, MySQL's
// as root, Docker's, a desktop's D-Bus... Each filesystem socket bound when a sandbox starts, in
// the host's network namespace or any other a process of which the runner sees (a container's,
// whose socket folder may be mounted on the host: /proc/<pid>/net/unix), gets /dev/null bound
// over it, so connecting is refused. Sockets under /tmp (the sandbox has its own), inside the workspace (its own
// servers') or inside a masked folder are left alone. A socket made after the sandbox started is
// not covered until the next one starts (a warm sandbox lives until idle; a terminal per open).
// One removed between the listing and bwrap's mount fails bwrap's start (it cannot make the
// mount point on the read-only root): vanishedCover tells that apart, and the start is retried
// once with a fresh listing.
import { lstatSync, readdirSync, readFileSync, readlinkSync, realpathSync } from "node:fs";

const inside = (path: string, dir: string) => path === dir || path.startsWith(dir.endsWith("/") ? dir : `${dir}/`);

/** Paths of filesystem sockets in the text of /proc/net/unix (the path is the 8th column, to the line's end). */
export function parseProcNetUnix(text: string): string[] {
  const out = new Set<string>();
  for (const line of text.split("\n").slice(1)) {
    const m = /^\s*\S+:\s+\S+\s+\S+\s+\S+\s+\S+\s+\S+\s+\S+\s+(\/.*)$/.exec(line);
    if (m) out.add(m[1]);
  }
  return [...out];
}

/**
 * The /proc/<pid>/net/unix of one process in each network namespace this runner can see: a
 * socket file's server may live in another namespace (a container whose socket folder is mounted
 * on the host, a service with a private network) and is listed only in its own namespace's table,
 * yet a connect() by path reaches it from any namespace.
 */
export function unixTablesOfEveryNamespace(proc = "/proc"): string[] {
  const tables = [`${proc}/net/unix`];
  const seen = new Set<string>();
  try {
    seen.add(readlinkSync(`${proc}/self/ns/net`));
  } catch {
    // no namespaces to tell apart: the own table only
    return tables;
  }
  let pids: string[] = [];
  try {
    pids = readdirSync(proc).filter((e) => /^\d+$/.test(e));
  } catch {
    return tables;
  }
  for (const pid of pids) {
    try {
      const ns = readlinkSync(`${proc}/${pid}/ns/net`);
      if (seen.has(ns)) continue;
      seen.add(ns);
      tables.push(`${proc}/${pid}/net/unix`);
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return tables;
}

/** Real paths of the host's sockets a sandbox must cover, given what it keeps (workspace) or hides already. */
export function hostSockets(keep: readonly string[], tables = unixTablesOfEveryNamespace()): string[] {
  const paths = new Set<string>();
  for (const table of tables) {
    try {
      for (const path of parseProcNetUnix(readFileSync(table, "utf8"))) paths.add(path);
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  const out = new Set<string>();
  for (const path of paths) {
    let real: string;
    try {
      real = realpathSync(path);
      // A socket bound and then removed stays listed under its old path: only existing sockets.
      if (!lstatSync(real).isSocket()) continue;
    } catch {
      continue;
    }
    if (inside(real, "/tmp") || keep.some((dir) => inside(real, dir))) continue;
    out.add(real);
  }
  return [...out].sort();
}

/** bwrap arguments covering each socket with /dev/null. */
export function coverArgs(sockets: readonly string[]): string[] {
  return sockets.flatMap((s) => ["--ro-bind", "/dev/null", s]);
}

/**
 * The covered socket whose removal failed a bwrap start, read from bwrap's error (`stderr`) and
 * the arguments it ran with: bwrap names the mount point it could not make. Undefined for any
 * other failure.
 */
export function vanishedCover(stderr: string, args: readonly string[]): string | undefined {
  for (let i = 0; i + 2 < args.length; i++) {
    if (args[i] !== "--ro-bind" || args[i + 1] !== "/dev/null") continue;
    const dest = args[i + 2];
    if (
      stderr.includes(`bwrap: Can't mkdir parents for ${dest}: `) ||
      stderr.includes(`bwrap: Can't create file at ${dest}: `)
    )
      return dest;
  }
  return undefined;
}
