// A seccomp filter that lets a sandboxed program make threads but no process: every fork, vfork
// and clone without CLONE_THREAD fails with EPERM (clone3 with ENOSYS, so libc falls back to
// clone, whose flags a filter can read). The runner's own git runs under it (workspace/git.ts):
// whatever a repository's configuration or attributes name (a filter driver under any name, a
// textconv, fsmonitor, hooks) git can then not start, by the kernel and not by a list of names
// the agent could get around. Only the first program is exec'd by bubblewrap itself; with no
// second process, nothing else ever starts. Given to bwrap as `--seccomp FD` (sandbox.ts).

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
const CLONE_THREAD = 0x00010000;

// seccomp_data: int nr; u32 arch; u64 ip; u64 args[6] (args[0]'s low word at 16 on little-endian).
const NR = 0;
const ARCH = 4;
const ARG0_LOW = 16;

interface Arch {
  audit: number;
  clone: number;
  clone3: number;
  /** fork and vfork where the architecture has them. */
  forks: number[];
}

const ARCHES: Record<string, Arch> = {
  x64: { audit: 0xc000003e, clone: 56, clone3: 435, forks: [57, 58] },
  arm64: { audit: 0xc00000b7, clone: 220, clone3: 435, forks: [] },
};

type Insn = [code: number, jt: number, jf: number, k: number];

/**
 * The filter as bytes for `bwrap --seccomp`, or undefined on an architecture it does not know
 * (the caller then relies on the sandbox and its limits alone).
 */
export function noForkFilter(arch: string = process.arch): Buffer | undefined {
  const a = ARCHES[arch];
  if (!a) return undefined;
  const prog: Insn[] = [];
  const ret = (k: number) => prog.push([RET_K, 0, 0, k]);
  // Another ABI (i386 through int 0x80 on x86_64) has other numbers: nothing of it is allowed.
  prog.push([LD_W_ABS, 0, 0, ARCH]);
  prog.push([JEQ_K, 1, 0, a.audit]);
  ret(RET_KILL_PROCESS);
  prog.push([LD_W_ABS, 0, 0, NR]);
  // x32 calls on x86_64 set bit 30 of the number.
  if (arch === "x64") {
    prog.push([JGE_K, 0, 1, 0x40000000]);
    ret(errno(EPERM));
  }
  for (const nr of a.forks) {
    prog.push([JEQ_K, 0, 1, nr]);
    ret(errno(EPERM));
  }
  prog.push([JEQ_K, 0, 1, a.clone3]);
  ret(errno(ENOSYS));
  prog.push([JEQ_K, 0, 3, a.clone]);
  prog.push([LD_W_ABS, 0, 0, ARG0_LOW]);
  prog.push([JSET_K, 1, 0, CLONE_THREAD]);
  ret(errno(EPERM));
  ret(RET_ALLOW);
  const buf = Buffer.alloc(prog.length * 8);
  prog.forEach(([code, jt, jf, k], i) => {
    buf.writeUInt16LE(code, i * 8);
    buf.writeUInt8(jt, i * 8 + 2);
    buf.writeUInt8(jf, i * 8 + 3);
    buf.writeUInt32LE(k >>> 0, i * 8 + 4);
  });
  return buf;
}
