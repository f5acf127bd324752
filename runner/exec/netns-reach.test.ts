// What a command granted network may reach besides the internet, with real processes: a server
// the host binds on every address (as a database or container daemon often is), probed from
// inside bubblewrap + slirp4netns at each of the host's own addresses; the private ranges and
// an operator's opened network read from the namespace's own routing table. The address-rule
// cases run anywhere; the namespace ones need bubblewrap, slirp4netns and iproute2.
import { createServer, type Server } from "node:http";
import { spawnSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { execConfigFromEnv } from ".";
import { scrubEnv } from "./env";
import { namespaceResolvConf, WorkspaceNetwork } from "./netns";
import { closedTo, hostAddresses, parseReach, reachRoutes } from "./netns-reach";
import { findOnPath, sandboxInfo, SandboxConfigError } from "./sandbox";
import { ShellService } from "./shell";
import { opContext, tempWorkspace } from "../testing/exec";
import { probe } from "../testing/net-probe";

vi.setConfig({ testTimeout: 60_000 });

describe("the rules", () => {
  it("QUIVER_SANDBOX_REACH takes IPv4 networks and addresses, normalised, and refuses the rest clearly", () => {
    expect(parseReach(" 10.20.1.5/16, 192.168.7.9 ,,10.20.0.0/16")).toEqual(["10.20.0.0/16", "192.168.7.9/32"]);
    expect(parseReach(undefined)).toEqual([]);
    for (const [bad, why] of [
      ["registry.corp", /not an address or a network/],
      ["10.0.0.0/33", /not an address/],
      ["fd00::/8", /IPv6/],
      ["169.254.169.254", /overlaps 169\.254\.0\.0\/16/],
      ["100.64.0.0/10", /overlaps 100\.100\.100\.200\/32/],
      ["0.0.0.0/0", /overlaps/],
      ["127.0.0.1", /overlaps 127\.0\.0\.0\/8/],
    ] as const)
      expect(() => parseReach(bad), bad).toThrow(why);
    expect(() => execConfigFromEnv({ ...process.env, QUIVER_SANDBOX_REACH: "10.0.0.0/33" })).toThrow(
      SandboxConfigError,
    );
    expect(execConfigFromEnv({ ...process.env, QUIVER_SANDBOX_REACH: "10.9.0.0/16" }).reach).toEqual(["10.9.0.0/16"]);
  });

  it("routes: closed ranges, then opened networks, then the host's own addresses, which nothing opens", () => {
    const lines = reachRoutes(["10.20.0.0/16", "192.168.0.0/16"], ["192.168.1.4/32", "2001:db8::4/128"]);
    expect(lines).toContain("route replace blackhole 10.0.0.0/8");
    expect(lines).toContain("route replace blackhole 169.254.0.0/16");
    expect(lines).toContain("route replace blackhole fc00::/7");
    // An opened network equal to a closed range replaces it rather than being shadowed by it.
    expect(lines).not.toContain("route replace blackhole 192.168.0.0/16");
    const opened = lines.indexOf("route replace 192.168.0.0/16 via 10.0.2.2 dev tap0");
    const own = lines.indexOf("route replace blackhole 192.168.1.4/32");
    expect(opened).toBeGreaterThan(lines.indexOf("route replace blackhole 10.0.0.0/8"));
    expect(own).toBeGreaterThan(opened);
    expect(lines.at(-1)).toBe("route replace blackhole 2001:db8::4/128");
  });

  it("which resolvers a command cannot reach", () => {
    const own = ["192.0.2.2/32"];
    for (const ns of [
      "127.0.0.53",
      "0.0.0.0",
      "::1",
      "10.255.255.53",
      "192.0.2.2",
      "169.254.169.253",
      "2001:4860:4860::8888",
      "fd00::1",
      "resolver.lan",
    ])
      expect(closedTo(ns, [], own), ns).toBe(true);
    for (const ns of ["8.8.8.8", "1.1.1.1", "10.0.2.3"]) expect(closedTo(ns, [], own), ns).toBe(false);
    expect(closedTo("10.255.255.53", ["10.255.0.0/16"], own)).toBe(false);
    expect(closedTo("192.0.2.2", ["192.0.2.0/24"], own)).toBe(true);
  });

  it("a VPC's resolver becomes slirp4netns's forwarder; a public one stays", async () => {
    const dir = await mkdtemp(join(tmpdir(), "quiver-resolv-"));
    try {
      await writeFile(join(dir, "vpc"), "nameserver 10.0.0.2\nnameserver 172.16.0.23\nsearch ec2.internal\n");
      await writeFile(join(dir, "public"), "nameserver 8.8.8.8\n");
      const vpc = namespaceResolvConf(join(dir, "vpc"), dir);
      expect(vpc).toBeDefined();
      const { readFileSync } = await import("node:fs");
      expect(readFileSync(vpc!.file, "utf8")).toBe("nameserver 10.0.2.3\nsearch ec2.internal\n");
      expect(namespaceResolvConf(join(dir, "public"), dir)).toBeUndefined();
      expect(namespaceResolvConf(join(dir, "vpc"), dir, ["10.0.0.0/16", "172.16.0.0/24"])).toBeUndefined();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

const ready =
  sandboxInfo("auto").available &&
  !!findOnPath("slirp4netns") &&
  !!findOnPath("unshare") &&
  !!findOnPath("nsenter") &&
  !!findOnPath("ip");

describe.runIf(ready)("the workspace namespace's reach (bubblewrap + slirp4netns)", () => {
  let ws: Awaited<ReturnType<typeof tempWorkspace>>;
  let home: string;
  let wide: Server;
  let port: number;
  const owned: Array<{ network: WorkspaceNetwork; shell: ShellService }> = [];

  beforeAll(async () => {
    ws = await tempWorkspace();
    home = await mkdtemp(join(tmpdir(), "quiver-reach-home-"));
    // A service bound on every address: the host's own addresses reach it from the host.
    wide = createServer((_req, res) => res.end("wide-service-reached"));
    await new Promise<void>((r) => wide.listen(0, "0.0.0.0", r));
    port = (wide.address() as { port: number }).port;
  });
  afterAll(async () => {
    for (const o of owned) {
      await o.shell.dispose();
      await o.network.dispose();
    }
    wide.close();
    await rm(home, { recursive: true, force: true });
    await ws?.cleanup();
  });

  const logs: string[] = [];
  const shellWith = (reach: string[] = []) => {
    const network = new WorkspaceNetwork({ sandboxed: true, hostNetwork: false, reach, log: (l) => logs.push(l) });
    const shell = new ShellService({
      sandbox: sandboxInfo("auto"),
      env: scrubEnv({ ...process.env, HOME: home }),
      allowNetwork: true,
      network,
    });
    owned.push({ network, shell });
    return async (command: string) => (await shell.run({ command, network: true }, opContext(ws.workspace))).output;
  };
  const until = async (check: () => boolean) => {
    for (const end = Date.now() + 10_000; !check(); await new Promise((r) => setTimeout(r, 20)))
      if (Date.now() > end) throw new Error(`timed out; log: ${logs.join(" | ")}`);
  };
  const own = () =>
    hostAddresses()
      .filter((a) => !a.includes(":"))
      .map((a) => a.replace(/\/32$/, ""));

  it("a service the host binds on every address answers the host at its own addresses (so CLOSED below means something)", async () => {
    expect(own().length).toBeGreaterThan(0);
    for (const a of own()) expect(await (await fetch(`http://${a}:${port}/`)).text()).toBe("wide-service-reached");
  });

  it("a command granted network reaches none of the host's own addresses, and cannot lift the routes", async () => {
    const run = shellWith();
    const targets = own().map((a) => `${a}:${port}`);
    const out = await run(
      `${probe(targets)}\ncurl -sS --max-time 3 http://${own()[0]}:${port}/ 2>&1; echo curl=$?\nip route del blackhole ${own()[0]} 2>&1; echo del=$?`,
    );
    for (const t of targets) expect(out, out).toContain(`CLOSED ${t}`);
    expect(out).not.toContain("wide-service-reached");
    expect(out).toMatch(/curl=[1-9]/);
    expect(out).toMatch(/Operation not permitted[^]*del=2/); // the route is there, and stays
  });

  it("nor any private or reserved network, by any protocol; slirp4netns's own resolver stays", async () => {
    const run = shellWith();
    const closed = ["10.1.2.3", "172.20.0.5", "192.168.1.1", "100.64.3.4", "192.0.0.9", "240.1.2.3", "169.254.169.254"];
    const out = await run(
      `for a in ${[...closed, "8.8.8.8", "10.0.2.3"].join(" ")}; do echo "$a: $(ip route get $a 2>&1 | head -1)"; done`,
    );
    const route = (a: string) => out.split("\n").find((l) => l.startsWith(`${a}: `)) ?? "";
    // Routes are the kernel's, for every protocol: no way out for any of them.
    for (const a of closed) expect(route(a), out).not.toMatch(/ via | dev tap0/);
    expect(route("8.8.8.8"), out).toMatch(/via 10\.0\.2\.2 dev tap0/);
    expect(route("10.0.2.3"), out).toMatch(/dev tap0/);
  });

  it("names still resolve when the host's resolver sits in a closed range (through slirp4netns's forwarder)", async () => {
    const run = shellWith();
    const conf = await run("cat /etc/resolv.conf");
    expect(conf).toMatch(/^nameserver /m);
    for (const line of conf.split("\n").filter((l) => l.startsWith("nameserver ")))
      expect(closedTo(line.slice(11).trim(), [], hostAddresses()), conf).toBe(false);
    // Where the host itself resolves names (CI's network may not), the sandbox does too.
    const host = spawnSync("getent", ["hosts", "registry.npmjs.org"], { encoding: "utf8", timeout: 10_000 });
    if (host.status === 0)
      expect(await run("getent hosts registry.npmjs.org; echo rc=$?")).toMatch(/registry\.npmjs\.org[^]*rc=0/);
  });

  it("QUIVER_SANDBOX_REACH opens an operator's network, but never the host inside it", async () => {
    const first = own()[0];
    const around = `${first.split(".").slice(0, 3).join(".")}.0/24`;
    const run = shellWith(["10.77.0.0/16", around]);
    const out = await run(
      `for a in 10.77.1.1 10.78.1.1; do echo "$a: $(ip route get $a 2>&1 | head -1)"; done\n${probe([`${first}:${port}`])}`,
    );
    expect(out, out).toMatch(/^10\.77\.1\.1: 10\.77\.1\.1 via 10\.0\.2\.2 dev tap0/m);
    expect(out, out).not.toMatch(/^10\.78\.1\.1: [^\n]*via/m);
    expect(out).toContain(`CLOSED ${first}:${port}`);
  });

  it.runIf(process.getuid?.() === 0)(
    "an address the host gains while the runner runs is closed before the next command, also once the monitor was killed",
    async () => {
      const run = shellWith();
      expect(await run("true")).toBeDefined(); // the namespace exists before the address does
      // Outside every closed range: only the host-address rule closes them.
      const [gained, later] = ["192.88.99.7", "192.88.99.8"];
      const addrs = (op: "add" | "del", a: string) =>
        spawnSync("ip", ["addr", op, `${a}/32`, "dev", "lo"], { encoding: "utf8" });
      const add = addrs("add", gained);
      if (add.status !== 0) return void console.warn(`cannot add an address here: ${add.stderr}`);
      try {
        expect(await (await fetch(`http://${gained}:${port}/`)).text()).toBe("wide-service-reached");
        // The warm sandbox of the first command runs this one: the monitor, not a new sandbox, closes it.
        await until(() => logs.some((l) => l.includes(`new address to commands: ${gained}/32`)));
        expect(await run(probe([`${gained}:${port}`]))).toContain(`CLOSED ${gained}:${port}`);

        const monitor = spawnSync("pgrep", ["-P", String(process.pid), "-f", "monitor address"], { encoding: "utf8" });
        expect(monitor.stdout.trim(), "the runner's one ip monitor").toMatch(/^\d+$/);
        process.kill(Number(monitor.stdout.trim()), "SIGKILL");
        await until(() => logs.some((l) => l.includes("ip monitor exited (SIGKILL)")));
        addrs("add", later);
        await until(() => logs.some((l) => l.includes(`new address to commands: ${later}/32`)));
        expect(await run(probe([`${later}:${port}`]))).toContain(`CLOSED ${later}:${port}`);
      } finally {
        addrs("del", gained);
        addrs("del", later);
      }
    },
  );
});
