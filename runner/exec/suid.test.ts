// No setuid, setgid or file capability comes out of the sandbox (seccomp.ts noSuidFilter): the
// workspace is nosuid only inside it, so such a file would be a shell as the runner's user for
// anyone on the host. Real bubblewrap runs every way of making one we know of, in commands with
// and without network, in a terminal and as a user who is not root, and the host then looks at
// the workspace with stat and listxattr. Copies of a setuid file still complete, without the bit.
import { execFileSync, spawnSync } from "node:child_process";
import { chmod, chown, copyFile, lstat, mkdir, mkdtemp, readdir, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { RunnerToServer } from "../../server/protocol/runner";
import { opContext, tempWorkspace } from "../testing/exec";
import { scrubEnv } from "./env";
import { PtyManager } from "./pty";
import { bwrapArgs, findOnPath, sandboxInfo } from "./sandbox";
import { noForkFilter, noSuidFilter } from "./seccomp";
import { ShellService } from "./shell";

vi.setConfig({ testTimeout: 60_000 });

const sandbox = sandboxInfo("auto");
const python = findOnPath("python3");

/**
 * Each way, in the current folder; `$1` is a setuid file outside the workspace (copied with its
 * modes kept). Python's are os.chmod, os.fchmod, os.open(O_CREAT) and mknod with the bits, a
 * security.capability xattr, and io_uring_setup and openat2 by number (both must say ENOSYS).
 */
const VECTORS = String.raw`
cp /bin/sh a; chmod u+s a; chmod g+s a; chmod 6755 a; chmod 04755 a; chmod 02755 a
mkdir sgid; chmod g+s sgid; chmod 2775 sgid
install -m 4755 /bin/true inst
cp -p "$1" cpp; echo "cp-p=$?"
cp -a "$1" cpa
mkdir tarp && tar -C "$(dirname "$1")" -cf - "$(basename "$1")" | tar -xpf - -C tarp
command -v rsync >/dev/null && rsync -p "$1" rsyncp
command -v setcap >/dev/null && cp /bin/sh capped && setcap cap_setuid+ep capped
cp /bin/sh plain; chmod 4755 plain; chmod 1755 plain && chmod 755 plain && echo plain-ok
command -v python3 >/dev/null && python3 - <<'EOF'
import ctypes, os, stat
def attempt(name, f):
    try:
        f()
        print(name, "done")
    except OSError as e:
        print(name, e.strerror)
open("py", "w").close()
attempt("os.chmod", lambda: os.chmod("py", 0o4755))
fd = os.open("py", os.O_RDONLY)
attempt("os.fchmod", lambda: os.fchmod(fd, 0o2755))
os.close(fd)
attempt("open-creat", lambda: os.close(os.open("created", os.O_CREAT | os.O_WRONLY, 0o4755)))
attempt("open-creat-plain", lambda: os.close(os.open("created-plain", os.O_CREAT | os.O_WRONLY, 0o644)))
attempt("mknod", lambda: os.mknod("node", stat.S_IFREG | 0o6755))
attempt("mkdir", lambda: os.mkdir("pydir", 0o2775))
cap = bytes.fromhex("0100000200000000000000000000000000000000")  # cap_setuid+ep, VFS v2
attempt("setxattr", lambda: os.setxattr("py", "security.capability", cap))
libc = ctypes.CDLL(None, use_errno=True)
params = ctypes.create_string_buffer(120)
print("io_uring_setup", libc.syscall(425, 8, params), ctypes.get_errno())
how = ctypes.create_string_buffer(24)
print("openat2", libc.syscall(437, -100, b"py", how, 24), ctypes.get_errno())
EOF
echo "vectors-$((40 + 2))"
`;

/** Files below `dir` (itself included) with a setuid or setgid bit, as the host sees them. */
async function special(dir: string): Promise<string[]> {
  const found: string[] = [];
  const mode = (await lstat(dir)).mode & 0o7777;
  if (mode & 0o6000) found.push(`${dir} ${mode.toString(8)}`);
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) found.push(...(await special(p)));
    else if ((await lstat(p)).mode & 0o6000) found.push(`${p} ${((await lstat(p)).mode & 0o7777).toString(8)}`);
  }
  return found;
}

/** Files below `dir` with a file capability (host's python; none where it is missing). */
function capabilities(dir: string): string[] {
  if (!python) return [];
  const script =
    "import os,sys\nfor r,ds,fs in os.walk(sys.argv[1]):\n for f in ds+fs:\n  p=os.path.join(r,f)\n" +
    "  if 'security.capability' in os.listxattr(p, follow_symlinks=False): print(p)";
  return execFileSync(python, ["-c", script, dir]).toString().split("\n").filter(Boolean);
}

/** What the kernel would do with a call under `prog` (the few BPF instructions seccomp.ts uses). */
function verdict(prog: Buffer, call: { arch: number; nr: number; args?: number[] }): number {
  const word = (off: number) => (off === 0 ? call.nr : off === 4 ? call.arch : (call.args?.[(off - 16) / 8] ?? 0));
  let acc = 0;
  for (let pc = 0; pc * 8 < prog.length; pc++) {
    const [code, jt, jf, k] = [
      prog.readUInt16LE(pc * 8),
      prog[pc * 8 + 2],
      prog[pc * 8 + 3],
      prog.readUInt32LE(pc * 8 + 4),
    ];
    if (code === 0x20) acc = word(k);
    else if (code === 0x06) return k;
    else if (code === 0x15) pc += acc === k ? jt : jf;
    else if (code === 0x35) pc += acc >= k ? jt : jf;
    else if (code === 0x45) pc += acc & k ? jt : jf;
    else throw new Error(`unexpected opcode ${code}`);
  }
  throw new Error("fell off the end");
}

describe("the seccomp programs", () => {
  const ALLOW = 0x7fff0000;
  const EPERM = 0x50001;
  const ENOSYS = 0x50026;
  const EOPNOTSUPP = 0x5005f;
  const O_CREAT = 0o100;
  const O_TMPFILE = 0o20200000;
  const arches = {
    x64: {
      audit: 0xc000003e,
      fchmod: 91,
      chmod: 90,
      openat: 257,
      open: 2,
      creat: 85,
      mknodat: 259,
      setxattr: 188,
      clone: 56,
      fork: 57,
      keys: [248, 249, 250],
    },
    arm64: {
      audit: 0xc00000b7,
      fchmod: 52,
      chmod: undefined,
      openat: 56,
      open: undefined,
      creat: undefined,
      mknodat: 33,
      setxattr: 5,
      clone: 220,
      fork: undefined,
      keys: [217, 218, 219],
    },
  };
  for (const [name, a] of Object.entries(arches)) {
    it(`refuse setuid and setgid modes, xattrs, io_uring and openat2 on ${name}, and the runner's git gets it too`, () => {
      for (const prog of [noSuidFilter(name)!, noForkFilter(name)!]) {
        const v = (nr: number, ...args: number[]) => verdict(prog, { arch: a.audit, nr, args });
        for (const mode of [0o4755, 0o2755, 0o6755, 0o104755]) expect(v(a.fchmod, 3, mode)).toBe(EPERM);
        for (const mode of [0o755, 0o1777, 0o644]) expect(v(a.fchmod, 3, mode)).toBe(ALLOW);
        expect(v(452, -100, 0, 0o4755, 0)).toBe(EPERM); // fchmodat2
        expect(v(a.openat, -100, 0, O_CREAT | 1, 0o4755)).toBe(EPERM);
        expect(v(a.openat, -100, 0, O_TMPFILE | 2, 0o2700)).toBe(EPERM);
        expect(v(a.openat, -100, 0, O_CREAT | 1, 0o755)).toBe(ALLOW);
        expect(v(a.openat, -100, 0, 0, 0o4755)).toBe(ALLOW); // no file made: the mode is not read
        expect(v(a.mknodat, -100, 0, 0o106755, 0)).toBe(EPERM);
        if (a.chmod) expect(v(a.chmod, 0, 0o4755)).toBe(EPERM);
        if (a.open) expect(v(a.open, 0, O_CREAT, 0o2755)).toBe(EPERM);
        if (a.creat) expect(v(a.creat, 0, 0o4755)).toBe(EPERM);
        expect(v(a.setxattr)).toBe(EOPNOTSUPP);
        expect(v(463)).toBe(EOPNOTSUPP); // setxattrat
        expect(v(425)).toBe(ENOSYS); // io_uring_setup
        expect(v(437)).toBe(ENOSYS); // openat2
        for (const nr of a.keys) expect(v(nr)).toBe(ENOSYS); // add_key, request_key, keyctl (keyring.test.ts)
        expect(verdict(prog, { arch: 0x40000003, nr: 15 })).toBe(0x80000000); // i386: killed
        if (name === "x64") expect(v(0x40000000 | 90, 0, 0o4755)).toBe(EPERM); // x32
      }
      const fork = (nr: number, ...args: number[]) => verdict(noForkFilter(name)!, { arch: a.audit, nr, args });
      const free = (nr: number, ...args: number[]) => verdict(noSuidFilter(name)!, { arch: a.audit, nr, args });
      expect(fork(a.clone, 0x11)).toBe(EPERM);
      expect(fork(a.clone, 0x10000 | 0x100)).toBe(ALLOW); // a thread
      expect(fork(435)).toBe(ENOSYS); // clone3
      expect(free(a.clone, 0x11)).toBe(ALLOW);
      if (a.fork) expect([fork(a.fork), free(a.fork)]).toEqual([EPERM, ALLOW]);
    });
  }
  it("exist for those two only", () => {
    expect(noSuidFilter("ia32")).toBeUndefined();
    expect(noForkFilter("riscv64")).toBeUndefined();
  });
});

describe.runIf(sandbox.available && noSuidFilter() !== undefined)("no setuid or setgid file out of the sandbox", () => {
  let ws: Awaited<ReturnType<typeof tempWorkspace>>;
  let src: string;
  let home: string;
  let shell: ShellService;
  beforeAll(async () => {
    ws = await tempWorkspace();
    home = await mkdtemp(join(tmpdir(), "quiver-suid-home-"));
    // Outside /tmp, which the sandbox replaces with its own.
    src = await mkdtemp("/var/tmp/quiver-suid-src-");
    await copyFile("/bin/true", join(src, "setuid"));
    await chmod(join(src, "setuid"), 0o4755);
    await writeFile(join(src, "vectors.sh"), VECTORS);
    shell = new ShellService({ sandbox, env: scrubEnv({ ...process.env, HOME: home }), allowNetwork: true });
  });
  afterAll(async () => {
    await shell?.dispose();
    await ws.cleanup();
    await rm(home, { recursive: true, force: true });
    await rm(src, { recursive: true, force: true });
  });

  /** Checks the host's view of `dir` after VECTORS ran there and printed `out`. */
  async function expectNone(dir: string, out: string) {
    expect(out).toContain("vectors-42");
    expect(await special(dir)).toEqual([]);
    expect(capabilities(dir)).toEqual([]);
    // What must still work: ordinary modes, the sticky bit, creating files, the copies themselves.
    expect(out).toContain("plain-ok");
    expect((await stat(join(dir, "cpp"))).size).toBe((await stat(join(src, "setuid"))).size);
    expect((await stat(join(dir, "tarp", "setuid"))).size).toBe((await stat(join(src, "setuid"))).size);
    expect(out).toMatch(/cp-p=1/);
    expect(out).toMatch(/preserving permissions for .cpp.: Operation not permitted/);
    if (!python) return;
    expect(out).toMatch(/os\.chmod Operation not permitted/);
    expect(out).toMatch(/os\.fchmod Operation not permitted/);
    expect(out).toMatch(/open-creat Operation not permitted/);
    expect(out).toMatch(/open-creat-plain done/);
    expect(out).toMatch(/mknod Operation not permitted/);
    expect(out).toMatch(/mkdir done/); // the kernel drops S_ISGID from mkdir's mode by itself
    expect(out).toMatch(/setxattr Operation not supported/);
    expect(out).toMatch(/io_uring_setup -1 38/);
    expect(out).toMatch(/openat2 -1 38/);
  }

  for (const network of [false, true]) {
    it(`in a command${network ? " granted network" : ""}`, async () => {
      const dir = join(ws.dir, network ? "net" : "nonet");
      await mkdir(dir);
      const r = await shell.run(
        { command: `bash ${src}/vectors.sh ${src}/setuid 2>&1`, cwd: network ? "net" : "nonet", network },
        opContext(ws.workspace),
      );
      expect(r.meta).toMatchObject({ sandboxed: true, network });
      await expectNone(dir, r.output);
    });
  }

  it("in a terminal", async () => {
    const dir = join(ws.dir, "pty");
    await mkdir(dir);
    const sent: RunnerToServer[] = [];
    const m = new PtyManager({
      workspaceRoot: ws.dir,
      sandbox,
      env: scrubEnv({ ...process.env, HOME: home, PS1: "$ " }),
      send: (msg) => (sent.push(msg), true),
    });
    const output = () =>
      sent
        .map((msg) => (msg.type === "pty.data" ? msg.data : ""))
        .join("")
        .replaceAll("\r\n", "\n");
    try {
      m.handle({ type: "pty.open", ptyId: "t1", sessionId: "s1", cols: 200, rows: 50 });
      m.handle({ type: "pty.input", ptyId: "t1", data: `cd pty && bash ${src}/vectors.sh ${src}/setuid 2>&1\r` });
      const deadline = Date.now() + 45_000;
      while (!output().includes("vectors-42") && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      await expectNone(dir, output());
    } finally {
      await m.dispose();
    }
  });

  // A runner that is not root owns its files too: the same shell as that user for anyone else.
  const asNobody = process.getuid?.() === 0 && findOnPath("setpriv") !== undefined;
  it.runIf(asNobody)("in the sandbox of a runner that is not root", async () => {
    const dir = await mkdtemp(join(tmpdir(), "quiver-suid-nobody-"));
    try {
      await chown(dir, 65534, 65534);
      // Built by this root process for a runner that is nobody: with a HOME and PATH of its own, not
      // root's, whose folders (bound back into the masked /root: host-secrets.ts) nobody cannot read.
      const saved = { HOME: process.env.HOME, PATH: process.env.PATH };
      Object.assign(process.env, { HOME: dir, PATH: "/usr/sbin:/usr/bin:/sbin:/bin" });
      const cmd = (() => {
        try {
          return bwrapArgs(sandbox.bwrap!, { workspace: dir, cwd: dir, network: false, newSession: true }, [
            "sh",
            "-c",
            "cp /bin/sh s && chmod 4755 s; chmod 2755 s; stat -c %a s",
          ]);
        } finally {
          for (const [k, v] of Object.entries(saved))
            if (v === undefined) delete process.env[k];
            else process.env[k] = v;
        }
      })();
      const setpriv = findOnPath("setpriv")!;
      const r = spawnSync(setpriv, ["--reuid=65534", "--regid=65534", "--clear-groups", cmd.file, ...cmd.args], {
        encoding: "utf8",
      });
      // Where unprivileged user namespaces are off, bwrap cannot start as nobody: nothing to check.
      if (/user namespace|Operation not permitted.*setting up uid map|No permissions to create/i.test(r.stderr)) return;
      expect(r.stdout.trim()).toBe("755");
      expect(r.stderr).toMatch(/Operation not permitted/);
      expect(await special(dir)).toEqual([]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
