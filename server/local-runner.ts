// The embedded mode's runner: one child process serving the workspace, connecting back to this
// server with a per-start token. It is restarted with backoff if it dies and killed (with its
// whole process group) when the server stops, so no runner outlives the server.
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";

export interface LocalRunnerOptions {
  root: string;
  serverUrl: string;
  token: string;
  workspace: string;
  log: (line: string) => void;
}

export class LocalRunner {
  private child?: ChildProcess;
  private stopped = false;
  private restartTimer?: NodeJS.Timeout;
  private failures = 0;

  constructor(private readonly options: LocalRunnerOptions) {}

  start(): void {
    const { root, serverUrl, token, workspace, log } = this.options;
    const child = spawn(
      process.execPath,
      ["--import", "tsx", join(root, "runner", "main.ts"), "--server", serverUrl, "--workspace", workspace, "--parent-pid", String(process.pid)],
      {
        cwd: root,
        // The token travels in the environment, not argv, so `ps` does not show it.
        env: runnerEnvironment(process.env, { QUIVER_RUNNER_TOKEN: token }),
        stdio: ["ignore", "inherit", "inherit"],
        detached: true, // its own process group, so stop() can take every descendant with it
      },
    );
    this.child = child;
    const startedAt = Date.now();
    child.on("exit", (code, signal) => {
      this.child = undefined;
      if (this.stopped) return;
      this.failures = Date.now() - startedAt > 30_000 ? 1 : this.failures + 1;
      const delay = Math.min(30_000, 500 * 2 ** (this.failures - 1));
      log(`local runner exited (${signal ?? code}); restarting in ${delay} ms`);
      this.restartTimer = setTimeout(() => this.start(), delay);
    });
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  async stop(graceMs = 3000): Promise<void> {
    this.stopped = true;
    clearTimeout(this.restartTimer);
    const child = this.child;
    if (!child?.pid) return;
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    killGroup(child.pid, "SIGTERM");
    const timer = setTimeout(() => killGroup(child.pid!, "SIGKILL"), graceMs);
    await exited;
    clearTimeout(timer);
    killGroup(child.pid, "SIGKILL"); // stragglers the runner's own shutdown missed
  }
}

/** The runner needs neither the model's keys nor the database: it gets none of them. */
export function runnerEnvironment(env: Record<string, string | undefined>, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const out: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(env)) {
    if (/^(ANTHROPIC_|OPENAI_|DATABASE_URL$|QUIVER_RUNNER_TOKEN$|QUIVER_PROVIDER$|QUIVER_MODEL$)/.test(name)) continue;
    out[name] = value;
  }
  return { ...out, ...extra } as NodeJS.ProcessEnv;
}

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}
