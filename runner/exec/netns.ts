// The workspace's network: one network namespace per runner, shared by every sandboxed command
// and terminal granted network, with outbound access through slirp4netns and WITHOUT the host's
// loopback, so Quiver's own port (where loopback is the owner), a database trusting 127.0.0.1
// and every other service bound to loopback are out of reach, while a dev server started in the
// terminal is reachable from the agent's commands and from the preview (through the relay).
//
// Made lazily, on the first sandbox that needs it: the relay (netns-relay.ts) is started as the
// namespace's first process (`unshare --net`; for a runner that is not root, in a user
// namespace of its own), the runner keeps a descriptor of the namespace open, and sandboxes
// enter it through `nsenter --net=/proc/<runner>/fd/<n>` before bubblewrap starts (a descriptor,
// never a pid that could be reused). slirp4netns (`--disable-host-loopback`) gives it a tap
// device with a route out, but none to the host's own addresses, the private networks around it
// or the cloud's metadata service (netns-reach.ts, QUIVER_SANDBOX_REACH). Relay and slirp4netns die with the runner: SIGKILL on
// the runner's death (setpriv --pdeathsig), and the relay's stdin and slirp4netns's exit
// descriptor close.
//
// Modes, decided once (hello's sandbox.network): "isolated" as above; "none" when slirp4netns
// is missing: the namespace has loopback only, so the terminal and preview still work but the
// agent's requests for network are refused; "host" when the runner is not sandboxed, or with
// QUIVER_SANDBOX_HOST_NETWORK=1 (an explicit choice: commands then reach the host's loopback).
import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RELAY_LINE_MAX, RelayAnswer } from "../../server/protocol/netns-relay";
import { relayStart } from "./bundle";
import { OwnAddressGuard } from "./netns-own";
import { applyRoutes, closedTo, hostAddresses, reachRoutes } from "./netns-reach";
import { findOnPath } from "./sandbox";

export type NetworkMode = "isolated" | "host" | "none";

export interface NetworkOptions {
  /** Commands and terminals run in bubblewrap. */
  sandboxed: boolean;
  /** QUIVER_SANDBOX_HOST_NETWORK=1: network-granted sandboxes share the host's network. */
  hostNetwork: boolean;
  log(line: string): void;
  /** Time for the relay and slirp4netns to come up. */
  startTimeoutMs?: number;
  /** The host's resolver configuration (default /etc/resolv.conf). */
  resolvConf?: string;
  /** QUIVER_SANDBOX_REACH: private IPv4 networks commands may reach (parseReach). */
  reach?: string[];
}

/** What a sandbox granted network gets: its own empty namespace, the host's, or the workspace's (entered with `enter`). */
export interface SandboxNetwork {
  network: boolean;
  enter?: string[];
  /** A resolv.conf to bind over the host's (SandboxSpec.resolvConf). */
  resolvConf?: { file: string; at: string };
}

interface Namespace {
  dir: string;
  socket: string;
  enter: string[];
  resolvConf?: { file: string; at: string };
  fds: number[];
  /** Closes the host's own addresses as they change (undefined: no routes, "none" mode). */
  own?: OwnAddressGuard;
  relay: ChildProcess;
  restarting?: Promise<ChildProcess>;
  slirp?: ChildProcess;
}

const isAlive = (c: ChildProcess | undefined) => c !== undefined && c.exitCode === null && c.signalCode === null;

export class WorkspaceNetwork {
  readonly mode: NetworkMode;
  /** Why the mode is not "isolated", for the log and the IDE. */
  readonly reason?: string;
  private readonly tools: { unshare?: string; nsenter?: string; slirp?: string; setpriv?: string; ip?: string };
  private ns: Promise<Namespace> | undefined;
  private disposed = false;

  constructor(private readonly o: NetworkOptions) {
    this.tools = {
      unshare: findOnPath("unshare"),
      nsenter: findOnPath("nsenter"),
      slirp: findOnPath("slirp4netns"),
      setpriv: findOnPath("setpriv"),
      ip: findOnPath("ip"),
    };
    if (!o.sandboxed) [this.mode, this.reason] = ["host", "commands are not sandboxed"];
    else if (o.hostNetwork)
      [this.mode, this.reason] = [
        "host",
        "QUIVER_SANDBOX_HOST_NETWORK=1: sandboxes with network share the host's, loopback included",
      ];
    else if (!this.tools.unshare || !this.tools.nsenter)
      [this.mode, this.reason] = [
        "none",
        "unshare and nsenter (util-linux) are not installed: commands and terminals get no network",
      ];
    else if (!this.tools.slirp)
      [this.mode, this.reason] = [
        "none",
        "slirp4netns is not installed (apt-get install slirp4netns): commands and terminals get no outbound network",
      ];
    else if (!this.tools.ip)
      // Without routes to close them, the host's own services and its LAN would be reachable.
      [this.mode, this.reason] = [
        "none",
        "ip (iproute2) is not installed (apt-get install iproute2): commands and terminals get no outbound network",
      ];
    else this.mode = "isolated";
  }

  /**
   * The network a sandbox asking for `wanted` gets. Never the host's unless that was chosen: a
   * namespace that cannot be made leaves the sandbox in its own empty one (logged).
   */
  async sandboxNetwork(wanted: boolean): Promise<SandboxNetwork> {
    if (!wanted || !this.o.sandboxed) return { network: wanted };
    if (this.mode === "host") return { network: true };
    if (!this.tools.unshare || !this.tools.nsenter) return { network: false };
    try {
      const ns = await this.namespace();
      ns.own?.check();
      return { network: true, enter: ns.enter, ...(ns.resolvConf ? { resolvConf: ns.resolvConf } : {}) };
    } catch (err) {
      this.o.log(`no network namespace for the workspace (${(err as Error).message}); this sandbox gets no network`);
      return { network: false };
    }
  }

  /** `/proc/<pid>/net` of the namespace, when it exists (nothing of the workspace listens otherwise). */
  async procNet(): Promise<string | undefined> {
    const ns = await this.existing();
    if (!ns) return undefined;
    const relay = await this.relay(ns).catch(
      (err: Error) => void this.o.log(`the namespace relay could not start again: ${err.message}`),
    );
    return relay ? `/proc/${relay.pid}/net` : undefined;
  }

  /**
   * A TCP stream to `port` on the namespace's loopback, through the relay; undefined when there
   * is no namespace. Rejects with the connect's errno as `code` (ECONNREFUSED: nothing listens).
   */
  async connect(port: number): Promise<Socket | undefined> {
    const ns = await this.existing();
    if (!ns) return undefined;
    await this.relay(ns);
    return relayConnect(ns.socket, port);
  }

  /** The namespace's relay, started again inside it if it died (the namespace itself is held by our descriptor). */
  private relay(ns: Namespace): Promise<ChildProcess> {
    if (isAlive(ns.relay)) return Promise.resolve(ns.relay);
    ns.restarting ??= this.startRelay(ns.socket, [...this.deathsig(), ...ns.enter])
      .then((relay) => (ns.relay = relay))
      .finally(() => (ns.restarting = undefined));
    return ns.restarting;
  }

  private async existing(): Promise<Namespace | undefined> {
    return this.ns?.catch(() => undefined);
  }

  private namespace(): Promise<Namespace> {
    if (this.disposed) return Promise.reject(new Error("the runner is shutting down"));
    if (!this.ns) {
      this.ns = this.create();
      // A failed start is tried again by the next sandbox, not remembered forever.
      this.ns.catch(() => (this.ns = undefined));
    }
    return this.ns;
  }

  private deathsig(): string[] {
    return this.tools.setpriv ? [this.tools.setpriv, "--pdeathsig", "KILL", "--"] : [];
  }

  private async create(): Promise<Namespace> {
    // Runner-private: sandboxes have a /tmp of their own, so they never see this folder.
    const dir = mkdtempSync(join(tmpdir(), `quiver-netns-${process.pid}-`));
    const socket = join(dir, "relay.sock");
    const root = process.getuid?.() === 0;
    const fds: number[] = [];
    let relay: ChildProcess | undefined;
    let slirp: ChildProcess | undefined;
    let own: OwnAddressGuard | undefined;
    try {
      // Not root: a user namespace owns the network one (root in it is the runner's uid, which
      // slirp4netns needs), and nsenter joins both; bubblewrap then maps the sandbox back to the
      // runner's own uid (SandboxSpec.enter).
      const unshare = root
        ? [this.tools.unshare!, "--net"]
        : [this.tools.unshare!, "--user", "--map-root-user", "--net"];
      relay = await this.startRelay(socket, [...this.deathsig(), ...unshare, "--"]);
      const kinds = root ? ["net"] : ["user", "net"];
      for (const kind of kinds) fds.push(openSync(`/proc/${relay.pid}/ns/${kind}`, "r"));
      const path = (i: number) => `/proc/${process.pid}/fd/${fds[i]}`;
      const enter = root
        ? [this.tools.nsenter!, `--net=${path(0)}`, "--"]
        : [this.tools.nsenter!, `--user=${path(0)}`, `--net=${path(1)}`, "--preserve-credentials", "--"];
      if (this.mode === "isolated") {
        slirp = await this.startSlirp(relay.pid!);
        const addresses = hostAddresses();
        applyRoutes(this.tools.ip!, enter, reachRoutes(this.o.reach ?? [], addresses));
        own = new OwnAddressGuard(this.tools.ip!, enter, this.o.log, addresses, this.deathsig());
      }
      if (this.disposed) throw new Error("the runner is shutting down");
      const resolvConf =
        this.mode === "isolated"
          ? namespaceResolvConf(this.o.resolvConf ?? "/etc/resolv.conf", dir, this.o.reach)
          : undefined;
      this.o.log(
        `workspace network namespace up (${this.mode === "isolated" ? "outbound through slirp4netns, host loopback unreachable" : "loopback only"})`,
      );
      return { dir, socket, enter, resolvConf, fds, own, relay, slirp };
    } catch (err) {
      own?.dispose();
      for (const c of [relay, slirp]) c?.kill("SIGKILL");
      for (const fd of fds) closeSync(fd);
      rmSync(dir, { recursive: true, force: true });
      throw err;
    }
  }

  /** Starts the relay behind `prefix` and resolves once it listens. */
  private async startRelay(socket: string, prefix: string[]): Promise<ChildProcess> {
    const start = await relayStart(this.o.log);
    const argv = [...prefix, process.execPath, ...start.args, socket];
    const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", ...(start.bundled ? {} : { TSX_DISABLE_CACHE: "1" }) };
    const child = spawn(argv[0], argv.slice(1), {
      stdio: ["pipe", "pipe", "pipe"],
      env: env as unknown as NodeJS.ProcessEnv,
      cwd: "/",
    });
    child.stdin!.on("error", () => {});
    await this.until(child, "the namespace relay", (done) =>
      child.stdout!.on("data", (c: Buffer) => c.includes("ready") && done()),
    );
    child.stdout!.resume();
    return child;
  }

  private async startSlirp(pid: number): Promise<ChildProcess> {
    const args = [
      "--configure",
      "--mtu=65520",
      "--disable-host-loopback",
      "--enable-sandbox",
      "--enable-seccomp",
      "--exit-fd=3",
      "--ready-fd=4",
      String(pid),
      "tap0",
    ];
    const argv = [...this.deathsig(), this.tools.slirp!, ...args];
    // fd 3 is never written: it closes when the runner dies, and slirp4netns then exits.
    const child = spawn(argv[0], argv.slice(1), {
      stdio: ["ignore", "ignore", "pipe", "pipe", "pipe"],
      env: { PATH: process.env.PATH ?? "" } as unknown as NodeJS.ProcessEnv,
    });
    await this.until(child, "slirp4netns", (done) =>
      (child.stdio[4] as NodeJS.ReadableStream).on("data", () => done()),
    );
    child.on(
      "exit",
      (code, signal) =>
        this.disposed ||
        this.o.log(
          `slirp4netns exited (${signal ?? `code ${code}`}): the workspace has no outbound network until the runner restarts`,
        ),
    );
    return child;
  }

  /** Resolves when `ready` fires; rejects, with its stderr, if the child exits or times out first. */
  private until(child: ChildProcess, what: string, ready: (done: () => void) => void): Promise<void> {
    let stderr = "";
    child.stderr?.on("data", (c: Buffer) => (stderr = (stderr + c.toString()).slice(-1000)));
    const ms = this.o.startTimeoutMs ?? 15_000;
    return new Promise<void>((resolve, reject) => {
      let settled = false;
      const onError = (err: Error) => fail(`could not start: ${err.message}`);
      const onExit = (code: number | null, signal: string | null) => fail(`exited (${signal ?? `code ${code}`})`);
      const timer = setTimeout(() => fail(`did not start within ${ms} ms`), ms);
      const settle = () => {
        settled = true;
        clearTimeout(timer);
        child.off("exit", onExit);
        child.off("error", onError);
        child.on("error", () => {}); // a later failure is seen by its exit
      };
      function fail(why: string) {
        if (settled) return;
        settle();
        child.kill("SIGKILL");
        const tail = stderr.trim().split("\n").slice(-2).join(" | ");
        reject(new Error(`${what} ${why}${tail ? `: ${tail}` : ""}`));
      }
      child.once("error", onError);
      child.once("exit", onExit);
      ready(() => {
        if (settled) return;
        settle();
        resolve();
      });
    });
  }

  /** Ends the relay and slirp4netns; the namespace goes with the last sandbox in it. */
  async dispose(): Promise<void> {
    this.disposed = true;
    const ns = await this.existing();
    this.ns = undefined;
    if (!ns) return;
    ns.own?.dispose();
    for (const c of [ns.relay, ns.slirp]) if (isAlive(c)) c!.kill("SIGKILL");
    for (const fd of ns.fds) closeSync(fd);
    rmSync(ns.dir, { recursive: true, force: true });
  }
}

const NAMESERVER = /^\s*nameserver\s+(\S+)\s*$/;

/**
 * A host resolver the namespace cannot reach — on loopback (systemd-resolved's 127.0.0.53,
 * dnsmasq), on the host's own address, or in a private network the routes close (a VPC's
 * resolver at 10.0.0.2) — becomes slirp4netns's forwarder, 10.0.2.3, which asks the host's from
 * the host. The file is written beside the relay's socket and bound over the real path of the
 * host's (often a symlink into /run). Undefined when nothing needs changing or the host has none.
 */
export function namespaceResolvConf(
  hostFile: string,
  dir: string,
  reach: readonly string[] = [],
): { file: string; at: string } | undefined {
  let at: string;
  let text: string;
  try {
    at = realpathSync(hostFile);
    text = readFileSync(at, "utf8");
  } catch {
    return undefined;
  }
  const own = hostAddresses();
  const unreachable = (line: string) => {
    const server = NAMESERVER.exec(line)?.[1];
    return server !== undefined && closedTo(server, reach, own);
  };
  const lines = text.split("\n");
  if (!lines.some(unreachable)) return undefined;
  const out: string[] = [];
  for (const line of lines) {
    const next = unreachable(line) ? "nameserver 10.0.2.3" : line;
    if (next === "nameserver 10.0.2.3" && out.includes(next)) continue;
    out.push(next);
  }
  const file = join(dir, "resolv.conf");
  writeFileSync(file, out.join("\n"), { mode: 0o644 });
  return { file, at };
}

/** Opens `port` through the relay at `socket`: resolves with the stream once the relay connected it. */
export function relayConnect(socket: string, port: number): Promise<Socket> {
  const error = (message: string, code: string) => Object.assign(new Error(message), { code });
  return new Promise((resolve, reject) => {
    const s = connect(socket);
    let head = Buffer.alloc(0);
    const fail = (err: Error) => {
      s.destroy();
      reject(err);
    };
    const onEnd = () => fail(error("the namespace relay closed the connection", "ECONNRESET"));
    s.once("error", (err) => fail(error(`the namespace relay: ${err.message}`, "ECONNRESET")));
    s.once("end", onEnd);
    s.on("connect", () => s.write(`${JSON.stringify({ port })}\n`));
    // 'readable', not 'data': once its listener is gone the stream is neither flowing nor paused,
    // so whoever takes the socket starts it by listening, as with a fresh one.
    const onReadable = () => {
      let chunk: Buffer | null;
      while ((chunk = s.read() as Buffer | null) !== null) {
        head = Buffer.concat([head, chunk]);
        const nl = head.indexOf(10);
        if (nl < 0) {
          if (head.length > RELAY_LINE_MAX) return fail(error("the namespace relay sent no answer", "EPROTO"));
          continue;
        }
        s.off("readable", onReadable);
        s.off("end", onEnd);
        if (nl + 1 < head.length) s.unshift(head.subarray(nl + 1));
        let answer: RelayAnswer;
        try {
          answer = RelayAnswer.parse(JSON.parse(head.subarray(0, nl).toString("utf8")));
        } catch {
          return fail(error("the namespace relay sent a bad answer", "EPROTO"));
        }
        if (!answer.ok) return fail(error(answer.message, answer.code));
        s.removeAllListeners("error");
        return resolve(s);
      }
    };
    s.on("readable", onReadable);
  });
}
