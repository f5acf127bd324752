// The kernel's key quota (25 MB and a million keys for root, 20 KB and 200 keys for any other
// user) is one per user on the whole host, not per namespace, and keys linked into a user keyring
// outlive the command that added them for as long as its sandbox lives. A real command in the
// warm sandbox tries to fill it; the seccomp filter (seccomp.ts) answers every keyring call with
// ENOSYS, and the runner's user's quota on the host does not move. It used to fill it whole
// (1,249 keys of 20 KB), and no process of that user anywhere could add a key until the sandbox
// ended, 10 idle minutes after the last command.
import { readFileSync } from "node:fs";
import { expect, it } from "vitest";
import { noSuidFilter } from "./seccomp";
import { sandboxInfo } from "./sandbox";
import { useSandboxShell } from "../testing/sandbox-shell";

const sandbox = sandboxInfo("auto");
const warm = useSandboxShell();

/** Bytes of key payload the host charges to our user (/proc/key-users: `uid: usage nkeys/inst qnkeys/max qnbytes/max`). */
function quotaBytes(): number {
  const uid = process.getuid?.() ?? 0;
  const line = readFileSync("/proc/key-users", "utf8")
    .split("\n")
    .find((l) => l.trim().startsWith(`${uid}:`));
  return Number(/(\d+)\/\d+\s*$/.exec(line ?? "")?.[1] ?? 0);
}

// add_key(2) by number, as many 20 KB keys into the user keyring (-4) as the kernel takes.
const FILL = `python3 -c "
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
made = 0
for i in range(2000):
    if libc.syscall(248, b'user', b'k%d' % i, b'x' * 20000, ctypes.c_size_t(20000), ctypes.c_int(-4)) < 0: break
    made += 1
print('made', made, 'errno', ctypes.get_errno())
"`;

it.runIf(sandbox.available && process.arch === "x64" && noSuidFilter() !== undefined)(
  "a command cannot take the host user's kernel key quota",
  async () => {
    const before = quotaBytes();
    const r = await warm.shell.run({ command: FILL, timeout_ms: 60_000 }, warm.ctx);
    expect(r.output).toContain("made 0 errno 38");
    // The sandbox still runs (its keyring would live on with it): nothing was charged meanwhile.
    expect(quotaBytes() - before).toBeLessThan(1_000_000);
  },
  90_000,
);
