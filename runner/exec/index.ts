// The exec extension of the runner: the `shell` op, the person's PTYs and the sandbox facts for
// hello, configured from the runner's environment (QUIVER_SANDBOX, QUIVER_SANDBOX_HIDE,
// QUIVER_ENV_ALLOW, QUIVER_SHELL_NETWORK, QUIVER_PTY_NETWORK, QUIVER_SANDBOX_HOST_NETWORK,
// QUIVER_SANDBOX_REACH, QUIVER_LIMIT_*), and the workspace's network namespace, which commands,
// terminals and the preview share.
import { ensureCheckpointRoot } from "../checkpoints/shadow";
import { realpathSync, statSync } from "node:fs";
import { delimiter, isAbsolute } from "node:path";
import type { RunnerExtension, RunnerHost } from "../ops";
import { logFn } from "../log";
import { PROJECT_ROOT } from "./bundle";
import { limitsFromEnv, type Limits } from "./limits";
import { NON_INTERACTIVE_ENV, scrubEnv } from "./env";
import { WorkspaceNetwork } from "./netns";
import { parseReach } from "./netns-reach";
import { PtyManager } from "./pty";
import { helperSandbox } from "./helper-sandbox";
import { SandboxConfigError, sandboxInfo, type SandboxMode } from "./sandbox";
import { ShellService } from "./shell";
import { SHELL_END_SESSION } from "../../server/protocol/exec-ops";
import { checkOps } from "../checks/ops";

export interface ExecConfig {
  sandbox: SandboxMode;
  /** Secret-looking variable names commands may still see. */
  envAllow: string[];
  /** Whether a shell call may be granted network (the server asks the user first). */
  shellNetwork: boolean;
  ptyNetwork: boolean;
  /** QUIVER_SANDBOX_HOST_NETWORK=1: sandboxes granted network share the host's (loopback included). */
  hostNetwork: boolean;
  /** QUIVER_SANDBOX_REACH: private IPv4 networks commands granted network may reach (netns-reach.ts). */
  reach: string[];
  /** Folders commands and terminals may not see, besides the runner's own install folder. */
  hide: string[];
  /** Memory, processes, CPU time and file size per command and terminal (limits.ts). */
  limits: Limits;
}

const list = (v: string | undefined) =>
  (v ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);

export function execConfigFromEnv(env: NodeJS.ProcessEnv = process.env): ExecConfig {
  const mode = env.QUIVER_SANDBOX ?? "auto";
  if (mode !== "auto" && mode !== "off" && mode !== "require") {
    throw new SandboxConfigError(`QUIVER_SANDBOX must be auto, off or require (got ${JSON.stringify(mode)})`);
  }
  return {
    sandbox: mode,
    envAllow: list(env.QUIVER_ENV_ALLOW),
    shellNetwork: env.QUIVER_SHELL_NETWORK !== "0",
    ptyNetwork: env.QUIVER_PTY_NETWORK !== "0",
    hostNetwork: env.QUIVER_SANDBOX_HOST_NETWORK === "1",
    reach: configReach(env),
    hide: (env.QUIVER_SANDBOX_HIDE ?? "").split(delimiter).filter(Boolean),
    limits: configLimits(env),
  };
}

function configReach(env: NodeJS.ProcessEnv): string[] {
  try {
    return parseReach(env.QUIVER_SANDBOX_REACH);
  } catch (err) {
    throw new SandboxConfigError((err as Error).message);
  }
}

function configLimits(env: NodeJS.ProcessEnv): Limits {
  try {
    return limitsFromEnv(env);
  } catch (err) {
    throw new SandboxConfigError((err as Error).message);
  }
}

/**
 * What to mask, as real paths (bwrap mounts over what a path resolves to): the runner's own
 * install folder always, then the configured ones (the local runner is given the server's data
 * and source folders, and files such as its MCP configuration). One that does not exist hides
 * nothing and is left out; a folder gets an empty tmpfs over it, a file /dev/null (sandbox.ts).
 */
export function hiddenFolders(configured: readonly string[]): string[] {
  const out: string[] = [];
  for (const dir of [PROJECT_ROOT, ...configured]) {
    if (!isAbsolute(dir))
      throw new SandboxConfigError(`QUIVER_SANDBOX_HIDE takes absolute paths (got ${JSON.stringify(dir)})`);
    try {
      const real = realpathSync(dir);
      const st = statSync(real);
      if ((st.isDirectory() || st.isFile()) && !out.includes(real)) out.push(real);
    } catch {
      /* absent: nothing to hide */
    }
  }
  return out;
}

export function execExtension(host: RunnerHost, config: ExecConfig = execConfigFromEnv()): RunnerExtension {
  const sandbox = sandboxInfo(config.sandbox);
  // The checkpoints' shadow repositories too (made now: a folder that does not exist hides nothing).
  const hide = hiddenFolders([...config.hide, ...(host.hide ?? []), ensureCheckpointRoot()]);
  // The runner's own ripgrep and git on the workspace run in the same sandbox, network off; git
  // under the commands' limits too (helper-sandbox.ts).
  const root = host.workspace.root;
  const helpers = sandbox.available
    ? helperSandbox(sandbox, { workspace: root, hide, limits: config.limits })
    : undefined;
  if (helpers) host.workspace.helpers.useSandbox(helpers.wrap);
  const base = scrubEnv(process.env, { allow: config.envAllow });
  const log = logFn("exec");
  const network = new WorkspaceNetwork({
    sandboxed: sandbox.available,
    hostNetwork: config.hostNetwork,
    reach: config.reach,
    log,
  });
  if (network.reason && sandbox.available)
    log(`network for commands and terminals: ${network.mode} (${network.reason})`);
  const shell = new ShellService({
    sandbox,
    env: { ...base, ...NON_INTERACTIVE_ENV },
    envAllow: config.envAllow,
    allowNetwork: config.shellNetwork,
    network,
    hide,
    limits: config.limits,
  });
  const pty = new PtyManager({
    workspaceRoot: host.workspace.root,
    send: (m) => host.send(m),
    sandbox,
    env: base,
    network: config.ptyNetwork,
    workspaceNetwork: network,
    hide,
    limits: config.limits,
  });
  return {
    // run_check and tool_transaction run their checks through the same launcher as shell.
    ops: { shell: shell.op, [SHELL_END_SESSION]: shell.endSessionOp, ...checkOps(host, shell, log) },
    pty,
    sandbox: {
      available: sandbox.available,
      kind: sandbox.kind,
      ...(sandbox.reason ? { reason: sandbox.reason } : {}),
      network: network.mode,
      ...(network.reason ? { networkReason: network.reason } : {}),
    },
    network,
    sandboxNamespaces: async () => [...(await shell.namespaces()), ...pty.namespaces()],
    dispose: async () => {
      await shell.dispose();
      await network.dispose();
      await helpers?.dispose();
    },
  };
}
