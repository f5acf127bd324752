// The host's Unix sockets, covered in every sandbox. A read-only bind of / does not stop a
// connect(): a socket file on a read-only mount still connects, so without this a sandboxed
// command (network or not) reached PostgreSQL's /run/postgresql socket with trust auth, MySQL's
// as root, Docker's, a desktop's D-Bus... Each filesystem socket bound in the host's network
// namespace (/proc/net/unix) when a sandbox starts gets /dev/null bound over it, so connecting
// is refused. Sockets under /tmp (the sandbox has its own), inside the workspace (its own
// servers') or inside a masked folder are left alone. A socket made after the sandbox started is
// not covered until the next one starts (a warm sandbox lives until idle; a terminal per open).
import { lstatSync, readFileSync, realpathSync } from "node:fs";

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

/** Real paths of the host's sockets a sandbox must cover, given what it keeps (workspace) or hides already. */
export function hostSockets(keep: readonly string[], procNetUnix = "/proc/net/unix"): string[] {
  let text: string;
  try {
    text = readFileSync(procNetUnix, "utf8");
  } catch {
    return [];
  }
  const out = new Set<string>();
  for (const path of parseProcNetUnix(text)) {
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
