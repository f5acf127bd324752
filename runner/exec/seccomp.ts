// Seccomp filters for the sandbox (bubblewrap reads one as `--seccomp FD`, sandbox.ts), as BPF
// programs written by hand for x86_64 and arm64.
//
// noSuidFilter, under every command, terminal and helper: no file gets a setuid or setgid bit
// or a file capability. The workspace is mounted nosuid only inside the sandbox, and the uid is
// mapped 1:1, so such a file would be a shell as the runner's user for anyone on the host who
// reaches the folder (a file capability `cap_setuid+ep` even a root shell: the sandbox of a root
// runner keeps CAP_SETFCAP). Refused: chmod, fchmod, fchmodat, fchmodat2 with 06000 in the mode;
// open, openat, creat, mknod, mknodat with 06000 in the mode of a file they create; openat2 (its
// mode is in a struct a filter cannot read) with ENOSYS, so libc falls back to openat; every
// setxattr (the filter cannot read the name) with EOPNOTSUPP, which tools take for a file
// system without extended attributes (cp -a, tar, rsync carry on); io_uring, which would do the
// same operations without a system call the filter sees, with ENOSYS (libuv and liburing users
// fall back); add_key, request_key and keyctl with ENOSYS, as a kernel without keys: the
// kernel's key quota is one per user on the host, not per namespace, and keys a command links
// into its user keyring outlive the command (until its sandbox ends), so one sandbox could take
// the runner's user's whole quota from every other (keyring.test.ts). mkdir is left alone: the
// kernel drops S_ISUID and S_ISGID from its mode itself.
// A write to a file that is already setuid clears the bit (the sandbox has no CAP_FSETID over
// the host's files), and `cp -p` of one gets EPERM for its chmod and keeps a copy without it.
//
// noForkFilter adds to it: threads but no process. Every fork, vfork and clone without
// CLONE_THREAD fails with EPERM (clone3 with ENOSYS, so libc falls back to clone, whose flags a
// filter can read). The runner's own git runs under it (workspace/git.ts): whatever a
// repository's configuration or attributes name (a filter driver under any name, a textconv,
// fsmonitor, hooks) git can then not start, by the kernel and not by a list of names the agent
// could get around. Only the first program is exec'd by bubblewrap itself; with no second
// process, nothing else ever starts. One program holds both: bubblewrap before 0.5 takes one.

// struct sock_filter { u16 code; u8 jt; u8 jf; u32 k; } and the BPF opcodes used.
const LD_W_ABS = 0x20;
const JEQ_K = 0x15;
const JGE_K = 0x35;
const JSET_K = 0x45;
const RET_K = 0x06;

const RET_ALLOW = 0x7fff0000;
const RET_KILL_PROCESS = 0x80000000;
const errno = (n: number) => 0x00050000 | n;
const EPERM = 1;
const ENOSYS = 38;
const EOPNOTSUPP = 95;
const CLONE_THREAD = 0x00010000;
const SUID_SGID = 0o6000;
/** O_CREAT | __O_TMPFILE (the same on both): the kernel reads open's mode only with one of them. */
const CREATES = 0o100 | 0o20000000;

// seccomp_data: int nr; u32 arch; u64 ip; u64 args[6] (an argument's low word at 16 + 8i on
// little-endian; modes and flags are ints, so the low word is all the kernel reads of them).
const NR = 0;
const ARCH = 4;
const arg = (i: number) => 16 + 8 * i;

/** A system call that sets a mode: which argument is the mode, and which the open flags. */
interface ModeCall {
  nr: number;
  mode: number;
  flags?: number;
}

interface Arch {
  audit: number;
  clone: number;
  clone3: number;
  /** fork and vfork where the architecture has them. */
  forks: number[];
  modes: ModeCall[];
  /** Refused with ENOSYS: openat2, io_uring_setup, _enter, _register, add_key, request_key, keyctl. */
  nosys: number[];
  /** setxattr, lsetxattr, fsetxattr, setxattrat. */
  xattrs: number[];
}

// Numbers newer than some kernels (fchmodat2 452, setxattrat 463) are matched all the same: an
// older kernel has nothing there, and a newer one is covered the day it gains them.
const ARCHES: Record<string, Arch> = {
  x64: {
    audit: 0xc000003e,
    clone: 56,
    clone3: 435,
    forks: [57, 58],
    modes: [
      { nr: 90, mode: 1 }, // chmod
      { nr: 91, mode: 1 }, // fchmod
      { nr: 268, mode: 2 }, // fchmodat
      { nr: 452, mode: 2 }, // fchmodat2
      { nr: 2, mode: 2, flags: 1 }, // open
      { nr: 257, mode: 3, flags: 2 }, // openat
      { nr: 85, mode: 1 }, // creat
      { nr: 133, mode: 1 }, // mknod
      { nr: 259, mode: 2 }, // mknodat
    ],
    nosys: [437, 425, 426, 427, 248, 249, 250],
    xattrs: [188, 189, 190, 463],
  },
  arm64: {
    audit: 0xc00000b7,
    clone: 220,
    clone3: 435,
    forks: [],
    modes: [
      { nr: 52, mode: 1 }, // fchmod
      { nr: 53, mode: 2 }, // fchmodat
      { nr: 452, mode: 2 }, // fchmodat2
      { nr: 56, mode: 3, flags: 2 }, // openat
      { nr: 33, mode: 2 }, // mknodat
    ],
    nosys: [437, 425, 426, 427, 217, 218, 219],
    xattrs: [5, 6, 7, 463],
  },
};

/** An instruction whose jumps may name a label (resolved to an offset by assemble). */
type Insn = [code: number, jt: number | string, jf: number | string, k: number];
type Line = Insn | { label: string };

function assemble(lines: Line[]): Buffer {
  const at = new Map<string, number>();
  const insns: Insn[] = [];
  for (const l of lines) {
    if ("label" in l) at.set(l.label, insns.length);
    else insns.push(l);
  }
  const buf = Buffer.alloc(insns.length * 8);
  insns.forEach(([code, jt, jf, k], i) => {
    // BPF jumps only forward, by an offset from the next instruction.
    const off = (j: number | string) => {
      const n = typeof j === "number" ? j : at.get(j)! - i - 1;
      if (!(n >= 0 && n <= 255)) throw new Error(`seccomp: jump to ${j} out of range`);
      return n;
    };
    buf.writeUInt16LE(code, i * 8);
    buf.writeUInt8(off(jt), i * 8 + 2);
    buf.writeUInt8(off(jf), i * 8 + 3);
    buf.writeUInt32LE(k >>> 0, i * 8 + 4);
  });
  return buf;
}

function program(arch: string, noFork: boolean): Buffer | undefined {
  const a = ARCHES[arch];
  if (!a) return undefined;
  const p: Line[] = [];
  const ret = (k: number) => p.push([RET_K, 0, 0, k]);
  // Another ABI (i386 through int 0x80 on x86_64) has other numbers: nothing of it is allowed.
  p.push([LD_W_ABS, 0, 0, ARCH], [JEQ_K, 1, 0, a.audit]);
  ret(RET_KILL_PROCESS);
  p.push([LD_W_ABS, 0, 0, NR]);
  // x32 calls on x86_64 set bit 30 of the number.
  if (arch === "x64") p.push([JGE_K, "eperm", 0, 0x40000000]);
  for (const nr of a.nosys) p.push([JEQ_K, "enosys", 0, nr]);
  for (const nr of a.xattrs) p.push([JEQ_K, "eopnotsupp", 0, nr]);
  a.modes.forEach((c, i) => p.push([JEQ_K, `mode${i}`, 0, c.nr]));
  if (noFork) {
    for (const nr of a.forks) p.push([JEQ_K, "eperm", 0, nr]);
    p.push([JEQ_K, "enosys", 0, a.clone3]);
    p.push([JEQ_K, 0, "allow", a.clone], [LD_W_ABS, 0, 0, arg(0)], [JSET_K, "allow", "eperm", CLONE_THREAD]);
  }
  ret(RET_ALLOW);
  a.modes.forEach((c, i) => {
    p.push({ label: `mode${i}` });
    if (c.flags !== undefined) p.push([LD_W_ABS, 0, 0, arg(c.flags)], [JSET_K, 0, "allow", CREATES]);
    p.push([LD_W_ABS, 0, 0, arg(c.mode)], [JSET_K, "eperm", "allow", SUID_SGID]);
  });
  p.push({ label: "eperm" });
  ret(errno(EPERM));
  p.push({ label: "enosys" });
  ret(errno(ENOSYS));
  p.push({ label: "eopnotsupp" });
  ret(errno(EOPNOTSUPP));
  // Again at the end: BPF jumps only forward.
  p.push({ label: "allow" });
  ret(RET_ALLOW);
  return assemble(p);
}

/**
 * The no-setuid filter as bytes for `bwrap --seccomp`, or undefined on an architecture it does
 * not know (the caller then relies on the sandbox alone).
 */
export function noSuidFilter(arch: string = process.arch): Buffer | undefined {
  return program(arch, false);
}

/** The no-setuid filter that also refuses to make a process (the runner's git); undefined likewise. */
export function noForkFilter(arch: string = process.arch): Buffer | undefined {
  return program(arch, true);
}
