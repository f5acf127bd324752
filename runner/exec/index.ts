// The exec extension of the runner: the `shell` op, the person's PTYs and the sandbox facts for
// hello, configured from the runner's environment (QUIVER_SANDBOX, QUIVER_ENV_ALLOW,
// QUIVER_SHELL_NETWORK, QUIVER_PTY_NETWORK).
import type { RunnerExtension, RunnerHost } from "../ops";
import { NON_INTERACTIVE_ENV, scrubEnv } from "./env";
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
  };
}

export function execExtension(host: RunnerHost, config: ExecConfig = execConfigFromEnv()): RunnerExtension {
  const sandbox = sandboxInfo(config.sandbox);
  const base = scrubEnv(process.env, { allow: config.envAllow });
  const shell = new ShellService({
    sandbox,
    env: { ...base, ...NON_INTERACTIVE_ENV },
    envAllow: config.envAllow,
    allowNetwork: config.shellNetwork,
  });
  const pty = new PtyManager({
    workspaceRoot: host.workspace.root,
    send: (m) => host.send(m),
    sandbox,
    env: base,
    network: config.ptyNetwork,
  });
  return {
    ops: { shell: shell.op },
    pty,
    sandbox: { available: sandbox.available, kind: sandbox.kind },
    dispose: () => shell.dispose(),
  };
}
