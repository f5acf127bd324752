// How a command gets started. Command (command.ts) talks to a Launcher; there are two:
// WarmLauncher (warm.ts), which hands commands to an exec server already running inside the
// sandbox, and DirectLauncher here, for a runner without a sandbox: `bash -c` spawned by the
// runner itself in its own process group. Both run the login profile once (login-env.ts)
// rather than `bash -lc` per command. Without a PID namespace, a marker in each command's
// environment lets killTree find what left the group (`(sleep &)`, `setsid`).
import { spawn } from "node:child_process";
import type { OutputSink, RemoteExit } from "./exec-client";
import { killTree, MARKER_VAR, newMarker } from "./kill";
import { captureLoginEnv } from "./login-env";

export type { OutputSink, RemoteExit };

/**
 * A non-login, non-interactive bash. --norc because `bash -c` still runs ~/.bashrc when it
 * thinks sshd started it: SSH_CLIENT in the environment, or stdin a socket, which is what a
 * Node "pipe" is (the command shell reads its command from one).
 */
export const BASH_C = ["bash", "--norc", "-c"];

export interface LaunchSpec {
  command: string;
  /** Absolute real path of the workspace root. */
  workspace: string;
  cwd: string;
  network: boolean;
  /** Value of QUIVER_EXEC_ID in the command's environment. */
  marker: string;
}

export interface Launched {
  /** Resolves once the command exited, its stragglers are dead and its output is drained. */
  readonly exited: Promise<RemoteExit>;
  /** Kills the command and everything it started; resolves when all of it is gone. */
  kill(): Promise<void>;
}

export interface Launcher {
  readonly sandboxed: boolean;
  launch(spec: LaunchSpec, sink: OutputSink): Promise<Launched>;
  dispose(): Promise<void>;
}

/** argv in its own process group, stdin /dev/null; stragglers found by `marker` die with it. */
export function spawnDirect(argv: string[], cwd: string, env: Record<string, string>, marker: string, sink: OutputSink): Launched {
  const child = spawn(argv[0], argv.slice(1), {
    cwd,
    // Next's types make NODE_ENV required on ProcessEnv; a command's environment need not have it.
    env: { ...env, [MARKER_VAR]: marker } as unknown as NodeJS.ProcessEnv,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  child.stdout!.on("data", (c: Buffer) => sink(1, c));
  child.stderr!.on("data", (c: Buffer) => sink(2, c));
  const exited = new Promise<RemoteExit>((resolve) => {
    let exit: { code: number | null; signal: string | null } | undefined;
    child.once("error", (err) => {
      if (child.pid === undefined) resolve({ code: null, signal: null, error: `failed to start: ${err.message}` });
    });
    // Background children keep the pipes open after the command itself exits: they do not
    // outlive it, so kill them, then wait for the pipes to drain.
    child.once("exit", (code, signal) => {
      exit = { code, signal };
      void killTree(child.pid, marker);
    });
    child.once("close", (code, signal) => resolve(exit ?? { code, signal }));
  });
  return {
    exited,
    kill: async () => {
      await killTree(child.pid, marker);
      await exited;
    },
  };
}

export class DirectLauncher implements Launcher {
  readonly sandboxed = false;
  private readonly loginEnv = new Map<string, Promise<Record<string, string>>>();

  constructor(private readonly o: { env: Record<string, string>; envAllow: readonly string[]; log(line: string): void }) {}

  async launch(spec: LaunchSpec, sink: OutputSink): Promise<Launched> {
    const env = await this.envFor(spec.workspace);
    return spawnDirect([...BASH_C, spec.command], spec.cwd, env, spec.marker, sink);
  }

  private envFor(workspace: string): Promise<Record<string, string>> {
    let env = this.loginEnv.get(workspace);
    if (!env) {
      const start = (argv: string[], sink: OutputSink) => Promise.resolve(spawnDirect(argv, workspace, this.o.env, newMarker(), sink));
      env = captureLoginEnv(start, this.o.env, this.o.envAllow, this.o.log);
      this.loginEnv.set(workspace, env);
    }
    return env;
  }

  async dispose(): Promise<void> {
    this.loginEnv.clear();
  }
}
