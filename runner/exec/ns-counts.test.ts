// A real command in the warm sandbox tries to take what the kernel counts per user for the whole
// host: it makes nested user namespaces, held open, and inotify and fanotify instances, as many
// as it is given (ns-counts.ts). It stops at the sandbox's bound, far below the host's, and the
// runner's user can still make them outside. It used to make every one it asked for (a sandbox
// made 2,000 user namespaces in 35 s, and could hold every inotify instance of the host's 128).
// A person's terminal is bounded the same way before its shell starts (it may run what the
// agent wrote).
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { expect, it } from "vitest";
import type { Limits } from "./limits";
import { sandboxCounts } from "./ns-counts";
import { sandboxInfo } from "./sandbox";
import { useSandboxShell } from "../testing/sandbox-shell";
import type { RunnerToServer } from "../../server/protocol/runner";
import { scrubEnv } from "./env";
import { PtyManager } from "./pty";
import { tempWorkspace } from "../testing/exec";

const LIMITS: Limits = { memoryBytes: 0, processes: 1024, cpuSeconds: 0, fileBytes: 0 };
const sandbox = sandboxInfo("auto");
const warm = useSandboxShell({ limits: LIMITS });
const hostInotify = Number(readFileSync("/proc/sys/user/max_inotify_instances", "utf8"));

// Namespaces by unshare(2) in forked children that hold them until told; counted as made.
const NAMESPACES = (flag: string, tries: number) => `python3 -c "
import os, ctypes, sys, time
libc = ctypes.CDLL(None, use_errno=True)
made, kids = 0, []
for i in range(${tries}):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        ok = libc.unshare(${flag}) == 0
        os.write(w, b'1' if ok else b'0'); time.sleep(60); os._exit(0)
    kids.append(pid)
    if os.read(r, 1) == b'1': made += 1
    else: break
print('made', made)
for k in kids: os.kill(k, 9)
"`;
const CLONE_NEWUSER = 0x10000000;

// inotify_init1 as many times as it is given, the instances held by the one process.
const INOTIFY = (tries: number) => `python3 -c "
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
made = 0
for i in range(${tries}):
    if libc.inotify_init1(0) < 0: break
    made += 1
print('made', made)
"`;

// fanotify_init(FAN_REPORT_FID), which needs no privilege, likewise.
const FANOTIFY = (tries: number) => `python3 -c "
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
made = 0
for i in range(${tries}):
    if libc.fanotify_init(0x200, 0) < 0: break
    made += 1
print('made', made)
"`;

const made = (output: string) => Number(/made (\d+)/.exec(output)?.[1] ?? NaN);

it.skipIf(!sandbox.available)(
  "a command makes no more nested user namespaces than its sandbox's bound, and the host's user still can",
  async () => {
    const bound = sandboxCounts(LIMITS.processes, false).max_user_namespaces;
    const r = await warm.shell.run(
      { command: NAMESPACES(`${CLONE_NEWUSER}`, bound + 40), timeout_ms: 90_000 },
      warm.ctx,
    );
    // The sandbox's own and each command's PID namespace (no user one) take none of the bound.
    expect(made(r.output)).toBeGreaterThan(0);
    expect(made(r.output)).toBeLessThanOrEqual(bound);
    expect(execFileSync("unshare", ["--user", "true"]).toString()).toBe("");
    // Nor can it raise the bound: not in its own /proc (a fresh one, from its PID namespace), not as root of a nested namespace.
    const raise = `echo 100000 > /proc/sys/user/max_user_namespaces; unshare --user --map-root-user sh -c 'echo 100000 > /proc/sys/user/max_user_namespaces'`;
    await warm.shell.run({ command: raise }, warm.ctx);
    const after = await warm.shell.run(
      { command: NAMESPACES(`${CLONE_NEWUSER}`, bound + 40), timeout_ms: 90_000 },
      warm.ctx,
    );
    expect(made(after.output)).toBeLessThanOrEqual(bound);
  },
  120_000,
);

it.skipIf(!sandbox.available)(
  "a command holds no more inotify instances than its share of the host's, so the other workspaces' watchers start",
  async () => {
    const bound = sandboxCounts(LIMITS.processes, false).max_inotify_instances;
    expect(bound).toBeLessThan(hostInotify);
    // A few past the bound only: on the old code these came from the host's, shared with every test running.
    const r = await warm.shell.run({ command: INOTIFY(bound + 4), timeout_ms: 60_000 }, warm.ctx);
    expect(made(r.output)).toBe(bound);
    const groups = sandboxCounts(LIMITS.processes, false).max_fanotify_groups;
    const f = await warm.shell.run({ command: FANOTIFY(groups + 4), timeout_ms: 60_000 }, warm.ctx);
    expect(made(f.output)).toBe(groups);
  },
  90_000,
);

it.skipIf(!sandbox.available)(
  "a terminal's shell starts bounded: what is typed at once already sees the bound",
  async () => {
    const ws = await tempWorkspace();
    const sent: RunnerToServer[] = [];
    const manager = new PtyManager({
      workspaceRoot: ws.dir,
      sandbox,
      env: scrubEnv({ ...process.env, PS1: "$ " }),
      send: (m) => (sent.push(m), true),
      limits: LIMITS,
    });
    const output = () => sent.flatMap((m) => (m.type === "pty.data" ? [m.data] : [])).join("");
    try {
      manager.handle({ type: "pty.open", ptyId: "t1", sessionId: "s1", cols: 200, rows: 24 });
      manager.handle({
        type: "pty.input",
        ptyId: "t1",
        data: `echo bound=$(cat /proc/sys/user/max_user_namespaces); ${INOTIFY(40).replaceAll("\n", "\r")}\r`,
      });
      await expect.poll(() => /made \d+/.test(output()), { timeout: 20_000 }).toBe(true);
      expect(output()).toContain(`bound=${sandboxCounts(LIMITS.processes, false).max_user_namespaces}`);
      expect(made(output())).toBe(sandboxCounts(LIMITS.processes, false).max_inotify_instances);
    } finally {
      manager.dispose();
      await ws.cleanup();
    }
  },
  60_000,
);
