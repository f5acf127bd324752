// The exec extension of the runner: the `shell` op, the person's PTYs and the sandbox facts for
// hello, configured from the runner's environment (QUIVER_SANDBOX, QUIVER_ENV_ALLOW,
// QUIVER_SHELL_NETWORK, QUIVER_PTY_NETWORK, QUIVER_SANDBOX_HOST_NETWORK), and the workspace's
// network namespace, which commands, terminals and the preview share.
import type { RunnerExtension, RunnerHost } from "../ops";
import { NON_INTERACTIVE_ENV, scrubEnv } from "./env";
import { WorkspaceNetwork } from "./netns";
import { PtyManager } from "./pty";
import { sandboxInfo, type SandboxMode } from "./sandbox";
import { ShellService } from "./shell";

export interface ExecConfig {
  sandbox: SandboxMode;
  /** Secret-looking variable names commands may still see. */
  envAllow: string[];
  /** Whether a shell call may be granted network (the server asks the user first). */
  shellNetwork: boolean;
  ptyNetwork: boolean;
  /** QUIVER_SANDBOX_HOST_NETWORK=1: sandboxes granted network share the host's (loopback included). */
  hostNetwork: boolean;
}

const list = (v: string | undefined) => (v ?? "").split(",").map((s) => s.trim()).filter(Boolean);

export function execConfigFromEnv(env: NodeJS.ProcessEnv = process.env): ExecConfig {
  const mode = env.QUIVER_SANDBOX ?? "auto";
  if (mode !== "auto" && mode !== "off" && mode !== "require") {
    throw new Error(`QUIVER_SANDBOX must be auto, off or require (got ${JSON.stringify(mode)})`);
  }
  return {
    sandbox: mode,
    envAllow: list(env.QUIVER_ENV_ALLOW),
    shellNetwork: env.QUIVER_SHELL_NETWORK !== "0",
    ptyNetwork: env.QUIVER_PTY_NETWORK !== "0",
    hostNetwork: env.QUIVER_SANDBOX_HOST_NETWORK === "1",
  };
}

export function execExtension(host: RunnerHost, config: ExecConfig = execConfigFromEnv()): RunnerExtension {
  const sandbox = sandboxInfo(config.sandbox);
  const base = scrubEnv(process.env, { allow: config.envAllow });
  const log = (line: string) => process.stderr.write(`quiver-runner: ${line}\n`);
  const network = new WorkspaceNetwork({ sandboxed: sandbox.available, hostNetwork: config.hostNetwork, log });
  if (network.reason && sandbox.available) log(`network for commands and terminals: ${network.mode} (${network.reason})`);
  const shell = new ShellService({
    sandbox,
    env: { ...base, ...NON_INTERACTIVE_ENV },
    envAllow: config.envAllow,
    allowNetwork: config.shellNetwork,
    network,
  });
  const pty = new PtyManager({
    workspaceRoot: host.workspace.root,
    send: (m) => host.send(m),
    sandbox,
    env: base,
    network: config.ptyNetwork,
    workspaceNetwork: network,
  });
  return {
    ops: { shell: shell.op },
    pty,
    sandbox: { available: sandbox.available, kind: sandbox.kind, network: network.mode, ...(network.reason ? { networkReason: network.reason } : {}) },
    network,
    dispose: async () => {
      await shell.dispose();
      await network.dispose();
    },
  };
}
