// The sandbox of the runner's own programs on the workspace (ripgrep, git, the TypeScript
// language server: workspace/helpers.ts): the commands' bubblewrap, network off (the host's for the
// network git only), the workspace the only writable folder besides what a caller binds on
// purpose. A program that may be made to run the agent's code (git, through what a repository
// configures) asks for `limited`: it then runs under the same memory, process, CPU and file-size
// limits as a command (limits.ts), in one cgroup shared by all such helpers (made on first use,
// removed on dispose), so a fork bomb or a memory hog in it stops at the limits instead of taking
// the runner down.
import type { SandboxWrap } from "../workspace/helpers";
import { makeJail, rlimitPrefix, type Jail, type Limits } from "./limits";
import { sandboxed, type SandboxInfo } from "./sandbox";

export interface HelperSandbox {
  wrap: SandboxWrap;
  dispose(): Promise<void>;
}

export function helperSandbox(
  info: SandboxInfo,
  o: { workspace: string; hide: string[]; limits?: Limits },
): HelperSandbox {
  let jail: Jail | undefined | null = null;
  const shared = () => {
    if (jail === null) jail = o.limits ? makeJail("helpers", o.limits) : undefined;
    return jail;
  };
  const wrap: SandboxWrap = (argv, w) => {
    const limited = w.limited && o.limits;
    const j = limited ? shared() : undefined;
    const inner = limited ? [...rlimitPrefix(o.limits!, j?.dirs.memory !== undefined), ...argv] : argv;
    const cmd = sandboxed(
      info,
      {
        workspace: o.workspace,
        cwd: w.cwd,
        network: w.network === true,
        // With the host's network it reads the workspace, never writes it (git-remote.ts).
        workspaceReadOnly: w.network === true,
        newSession: true,
        hide: o.hide,
        readOnly: w.readOnly,
        writable: w.writable,
        seccompFd: w.seccompFd,
        memoryBytes: o.limits?.memoryBytes,
      },
      inner,
    );
    if (!j) return cmd;
    const [file, ...args] = j.wrap([cmd.file, ...cmd.args]);
    return { file, args };
  };
  return {
    wrap,
    dispose: async () => {
      if (jail) await jail.dispose();
    },
  };
}
