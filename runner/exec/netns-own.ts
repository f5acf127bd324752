// Keeps the runner host's own addresses closed to each workspace's namespace while they change:
// DHCP renews, a VPN or container bridge comes up, an operator adds an address. A warm sandbox
// and a terminal live for minutes in the namespace made at the start, so the routes follow the
// host, not the sandboxes: one `ip monitor address` per runner (however many workspaces it
// serves) reports each change and every namespace closes the new addresses at once; each new
// sandbox checks again, and a monitor that dies is replaced by a check every few seconds. An
// address the host loses keeps its route: it may come back, and a route to an address nobody on
// this host holds closes nothing a command needs.
import { spawn, type ChildProcess } from "node:child_process";
import { applyRoutes, hostAddresses, ownRoutes } from "./netns-reach";

const POLL_MS = 5_000;

/** One namespace's routes to the host's own addresses. */
export class OwnAddressGuard {
  private readonly closed: Set<string>;

  constructor(
    private readonly ip: string,
    private readonly enter: readonly string[],
    readonly log: (line: string) => void,
    closedAlready: readonly string[],
    /** The monitor's death signal (setpriv --pdeathsig), like the namespace's own children. */
    prefix: readonly string[] = [],
  ) {
    this.closed = new Set(closedAlready);
    watch.add(this, ip, prefix);
  }

  /** Closes what the host gained since the last check. Throws when the routes cannot be made. */
  check(): void {
    const added = hostAddresses().filter((a) => !this.closed.has(a));
    if (added.length === 0) return;
    applyRoutes(this.ip, this.enter, ownRoutes(added));
    for (const a of added) this.closed.add(a);
    this.log(`closed the host's new address${added.length > 1 ? "es" : ""} to commands: ${added.join(", ")}`);
  }

  /** check(), its failure logged: from the monitor, with no sandbox to refuse network to. */
  checkLogged(): void {
    try {
      this.check();
    } catch (err) {
      this.log((err as Error).message);
    }
  }

  dispose(): void {
    watch.delete(this);
  }
}

/** The runner's one monitor of the host's addresses, running while a namespace needs it. */
class HostAddressWatch {
  private readonly guards = new Set<OwnAddressGuard>();
  private monitor?: ChildProcess;
  private poll?: NodeJS.Timeout;

  add(guard: OwnAddressGuard, ip: string, prefix: readonly string[]): void {
    this.guards.add(guard);
    if (!this.monitor && !this.poll) this.start(ip, prefix);
  }

  delete(guard: OwnAddressGuard): void {
    this.guards.delete(guard);
    if (this.guards.size > 0) return;
    const monitor = this.monitor;
    this.monitor = undefined;
    monitor?.kill("SIGKILL");
    if (this.poll) clearInterval(this.poll);
    this.poll = undefined;
  }

  private checkAll(): void {
    for (const g of this.guards) g.checkLogged();
  }

  private start(ip: string, prefix: readonly string[]): void {
    const argv = [...prefix, ip, "-o", "monitor", "address"];
    const child = spawn(argv[0], argv.slice(1), { stdio: ["ignore", "pipe", "ignore"] });
    this.monitor = child;
    // The runner's lifetime is not the monitor's to hold.
    child.unref();
    (child.stdout as unknown as { unref(): void }).unref();
    child.stdout!.on("data", () => this.checkAll());
    const fallBack = (why: string) => {
      if (this.monitor !== child) return; // stopped on purpose, or replaced
      this.monitor = undefined;
      for (const g of this.guards)
        g.log(`ip monitor ${why}: the host's addresses are checked every ${POLL_MS / 1000} s instead`);
      this.checkAll(); // what changed since it last spoke
      this.poll = setInterval(() => this.checkAll(), POLL_MS);
      this.poll.unref();
    };
    child.on("error", (err) => fallBack(`could not start (${err.message})`));
    child.on("exit", (code, signal) => fallBack(`exited (${signal ?? `code ${code}`})`));
  }
}

const watch = new HostAddressWatch();
