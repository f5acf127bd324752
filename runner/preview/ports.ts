// Which TCP ports listen where the preview can reach them (loopback or any address), read from
// /proc/net/tcp and tcp6 of the workspace's network namespace (where its terminals' and
// network-granted commands' servers are) and of the runner's own (a port opened inside a sandbox
// without network is in a namespace of its own and unreachable anyway). A port is
// the workspace's when a process holding its socket descends from the runner (terminals,
// commands) or has its working directory inside the workspace; those are found by matching
// socket inodes in /proc/<pid>/fd, for the candidate processes only, so a poll stays cheap.
// A server in one of the workspace's sandboxes without network (a namespace of its own each) is
// listed too, marked `sandboxed`: the preview cannot reach it, and the pane says why rather than
// "nothing listens" while the agent's server runs.
import { readdir, readFile, readlink } from "node:fs/promises";
import { dirname, sep } from "node:path";
import type { PreviewPortEntry } from "../../server/protocol/preview";
import { descendants, netnsOf, processes, stillIn, type Proc, type ProcNamespace } from "../exec/procfs";

export interface Listener {
  address: string;
  port: number;
  inode: string;
}

const LISTEN = "0A";

/** IPv4 in /proc is one 32-bit word in host (little-endian) order. */
function ipv4(hex: string): string {
  const n = Number.parseInt(hex, 16);
  return [n & 255, (n >>> 8) & 255, (n >>> 16) & 255, n >>> 24].join(".");
}

/** IPv6 in /proc is four 32-bit words, each in host order. */
function ipv6(hex: string): string {
  const bytes: number[] = [];
  for (let w = 0; w < 4; w++) {
    const word = hex.slice(w * 8, w * 8 + 8);
    for (let b = 3; b >= 0; b--) bytes.push(Number.parseInt(word.slice(b * 2, b * 2 + 2), 16));
  }
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((bytes[i] << 8) | bytes[i + 1]).toString(16));
  const full = groups.join(":");
  if (full === "0:0:0:0:0:0:0:0") return "::";
  if (full === "0:0:0:0:0:0:0:1") return "::1";
  if (full.startsWith("0:0:0:0:0:ffff:")) return `::ffff:${bytes.slice(12).join(".")}`;
  return full;
}

/** Listening sockets from the text of /proc/net/tcp (v4) or /proc/net/tcp6 (v6). */
export function parseProcNet(text: string, family: 4 | 6): Listener[] {
  const out: Listener[] = [];
  for (const line of text.split("\n").slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f.length < 10 || f[3] !== LISTEN) continue;
    const [addr, port] = f[1].split(":");
    out.push({ address: family === 4 ? ipv4(addr) : ipv6(addr), port: Number.parseInt(port, 16), inode: f[9] });
  }
  return out;
}

/** Addresses a connection to the machine's loopback reaches. */
export function reachable(address: string): boolean {
  return address === "0.0.0.0" || address === "::" || address === "::1" || /^(::ffff:)?127\./.test(address);
}

async function text(path: string): Promise<string | undefined> {
  return readFile(path, "utf8").catch(() => undefined);
}

/** The runner's descendants plus processes working inside the workspace (a server started with nohup/setsid loses its parent). */
async function workspaceProcesses(root: string, self: number): Promise<Proc[]> {
  const procs = await processes();
  const found = new Set(descendants(procs, self).map((p) => p.pid));
  await Promise.all(
    procs.map(async ({ pid }) => {
      if (pid === self || found.has(pid)) return;
      const cwd = await readlink(`/proc/${pid}/cwd`).catch(() => undefined);
      if (cwd && (cwd === root || cwd.startsWith(root + sep))) found.add(pid);
    }),
  );
  return procs.filter((p) => found.has(p.pid));
}

async function socketOwners(pids: number[], inodes: Set<string>): Promise<Map<string, number>> {
  const owners = new Map<string, number>();
  await Promise.all(
    pids.map(async (pid) => {
      const fds = await readdir(`/proc/${pid}/fd`).catch(() => [] as string[]);
      for (const fd of fds) {
        const link = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => "");
        const m = /^socket:\[(\d+)\]$/.exec(link);
        if (m && inodes.has(m[1]) && !owners.has(m[1])) owners.set(m[1], pid);
      }
    }),
  );
  return owners;
}

async function commandOf(pid: number): Promise<string | undefined> {
  const raw = await text(`/proc/${pid}/cmdline`);
  const cmd = raw?.split("\0").filter(Boolean).join(" ");
  return cmd ? (cmd.length > 120 ? `${cmd.slice(0, 119)}…` : cmd) : undefined;
}

export interface ListPortsOptions {
  /** Real path of the workspace root. */
  workspace: string;
  /** The runner's pid (its descendants count as the workspace's). */
  self?: number;
  /** Ports never listed (the Quiver server's own, when it runs on this machine). */
  exclude?: readonly number[];
  procNet?: string;
  /** `/proc/<pid>/net` of the workspace's network namespace: its ports come first, none excluded. */
  namespace?: string;
  /** False: the namespace's ports only, not the host's (a `--root` runner's workspaces). */
  hostPorts?: boolean;
  /** The workspace's sandboxes without network (each a namespace of its own), as the runner
   *  recorded them when it started each: their servers are listed as `sandboxed`. Not found by
   *  looking at processes, as on a `--root` runner every workspace's commands descend from it. */
  sandboxes?: readonly ProcNamespace[];
}

async function listenersIn(base: string): Promise<Listener[]> {
  const [v4, v6] = await Promise.all([text(`${base}/tcp`), text(`${base}/tcp6`)]);
  return [...parseProcNet(v4 ?? "", 4), ...parseProcNet(v6 ?? "", 6)].filter((l) => reachable(l.address));
}

/**
 * Listeners in the sandboxes' namespaces that are not `reachable` ones. A namespace is read
 * through the process recorded in it, and kept only if that process is still the one recorded
 * (same start time) and still there once read: a number reused meanwhile by another process must
 * not show that process's namespace.
 */
export async function sandboxedListeners(
  sandboxes: readonly ProcNamespace[],
  reachableNs: Set<string | undefined>,
): Promise<(Listener & Pick<ProcNamespace, "of">)[]> {
  const read = await Promise.all(
    sandboxes
      .filter((n) => !reachableNs.has(n.ns))
      .map(async (n) => {
        const listeners = await listenersIn(`/proc/${n.pid}/net`);
        return (await stillIn(n)) ? listeners.map((l) => ({ ...l, of: n.of })) : [];
      }),
  );
  return read.flat();
}

export async function listPorts(o: ListPortsOptions): Promise<PreviewPortEntry[]> {
  // Quiver's own port is excluded on the host only: in the namespace, that number is the app's.
  const host =
    o.hostPorts === false
      ? []
      : (await listenersIn(o.procNet ?? "/proc/net")).filter((l) => !o.exclude?.includes(l.port));
  // Everything listening in the namespace is the workspace's, whoever holds it.
  const own = o.namespace ? await listenersIn(o.namespace) : [];
  const inside = new Set(own.map((l) => l.inode));
  const workspaceNs = o.namespace && (await readlink(`${dirname(o.namespace)}/ns/net`).catch(() => undefined));
  const reachableNs = new Set([await netnsOf("self"), workspaceNs]);
  const walled = await sandboxedListeners(o.sandboxes ?? [], reachableNs);
  const unreachable = new Map(walled.map((l) => [l.inode, l.of ?? "command"] as const));
  // Reachable ones first: a port the preview can open wins over the same number in a sandbox.
  const listeners = [...own, ...host, ...walled];
  if (!listeners.length) return [];
  const procs = await workspaceProcesses(o.workspace, o.self ?? process.pid);
  const owners = await socketOwners(
    procs.map((p) => p.pid),
    new Set(listeners.map((l) => l.inode)),
  );
  const byPort = new Map<number, PreviewPortEntry>();
  for (const l of listeners) {
    const pid = owners.get(l.inode);
    const ours = pid !== undefined || inside.has(l.inode) || unreachable.has(l.inode);
    const prev = byPort.get(l.port);
    // One entry per port (the namespace's first, as the preview connects there first): a
    // dual-stack server has a v4 and a v6 socket; the workspace's one wins, and a port the
    // preview can open is never hidden behind a sandboxed one of the same number.
    if (prev && (prev.workspace || !ours || unreachable.has(l.inode))) continue;
    byPort.set(l.port, {
      port: l.port,
      address: l.address,
      workspace: ours,
      ...(pid !== undefined ? { pid, command: await commandOf(pid) } : {}),
      ...(unreachable.has(l.inode) ? { sandboxed: true as const, sandbox: unreachable.get(l.inode) } : {}),
    });
  }
  return [...byPort.values()].sort((a, b) => Number(b.workspace) - Number(a.workspace) || a.port - b.port);
}
