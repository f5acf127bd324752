// The embedded mode's runner: one child process serving the workspace, connecting back to this
// server with a per-start token. It is restarted with backoff if it dies and killed (with its
// whole process group) when the server stops, so no runner outlives the server. It is told what
// its sandbox must hide (the data folder and this source tree, QUIVER_SANDBOX_HIDE) and the
// interface the server listens on (HOST), since an unsandboxed runner is refused off loopback,
// and the server's log level (QUIVER_LOG_LEVEL); its log lines go to the server's own stderr;
// a runner that exits for its configuration (exit code 2) says why once and is not restarted.
import { spawn, type ChildProcess } from "node:child_process";
import { delimiter, join, resolve } from "node:path";
import { compiledEntry } from "./build/compiled";
import type { LogLevel } from "./protocol/log-line";

export interface LocalRunnerOptions {
  root: string;
  serverUrl: string;
  token: string;
  /** The runner id it connects as (`--id`), the only one its token may claim. */
  id?: string;
  workspace: string;
  /** --root: the folder holding every other workspace (projects'), one folder each; the
   *  `workspace` folder stays where it is as the runner's default workspace. */
  workspacesRoot?: string;
  /** The server's data folder: hidden from commands along with `root`. */
  dataDir?: string;
  /** Files of the server's that commands must not read either (the MCP configuration, with its servers' tokens). */
  hideFiles?: string[];
  /** The interface the server binds (HOST). */
  host?: string;
  /** The server's QUIVER_LOG_LEVEL, which the runner logs at too (the server may have it from elsewhere than process.env). */
  logLevel?: LogLevel;
  log: (line: string) => void;
}

/** The runner's exit code for a configuration it refuses (runner/main.ts). */
const EXIT_CONFIG = 2;

export class LocalRunner {
  private child?: ChildProcess;
  private stopped = false;
  private restartTimer?: NodeJS.Timeout;
  private failures = 0;
  /** Cleared when the runner refuses --root (no sandbox to keep workspaces apart): it then serves its default folder alone, as before projects. */
  private withRoot = true;

  constructor(private readonly options: LocalRunnerOptions) {}

  start(): void {
    const { root, serverUrl, token, workspace, dataDir, host, logLevel, log } = this.options;
    const workspacesRoot = this.withRoot ? this.options.workspacesRoot : undefined;
    const hide = [
      root,
      ...(dataDir ? [dataDir] : []),
      ...(this.options.hideFiles ?? []).map((f) => resolve(f)),
      ...(process.env.QUIVER_SANDBOX_HIDE ?? "").split(delimiter).filter(Boolean),
    ];
    const child = spawn(
      process.execPath,
      [
        ...runnerEntry(root),
        "--server",
        serverUrl,
        "--workspace",
        workspace,
        ...(this.options.id ? ["--id", this.options.id] : []),
        ...(workspacesRoot ? ["--root", workspacesRoot] : []),
        "--parent-pid",
        String(process.pid),
      ],
      {
        cwd: root,
        // The token travels in the environment, not argv, so `ps` does not show it.
        env: runnerEnvironment(process.env, {
          QUIVER_RUNNER_TOKEN: token,
          QUIVER_SANDBOX_HIDE: hide.join(delimiter),
          ...(host ? { HOST: host } : {}),
          ...(logLevel ? { QUIVER_LOG_LEVEL: logLevel } : {}),
          // Its id is bound to its token, so its key proves nothing; kept with the server's data, not in $HOME.
          ...(dataDir ? { QUIVER_RUNNER_KEY_FILE: join(dataDir, "runner-key.pem") } : {}),
        }),
        stdio: ["ignore", "inherit", "inherit"],
        detached: true, // its own process group, so stop() can take every descendant with it
      },
    );
    this.child = child;
    const startedAt = Date.now();
    child.on("exit", (code, signal) => {
      this.child = undefined;
      if (this.stopped) return;
      if (code === EXIT_CONFIG && workspacesRoot) {
        // Most likely no sandbox here: the Default project's workspace (its own folder) still works.
        log(
          "local runner refused --root (its message is above); restarting it on the default workspace alone: projects other than Default need a runner that can keep workspaces apart",
        );
        this.withRoot = false;
        this.restartTimer = setTimeout(() => this.start(), 100);
        return;
      }
      if (code === EXIT_CONFIG) {
        log("local runner refused its configuration (its message is above); not restarting it");
        return;
      }
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

/** The compiled runner beside a compiled server (`npm start`), else its sources under tsx. */
function runnerEntry(root: string): string[] {
  const source = join(root, "runner", "main.ts");
  const compiled = compiledEntry(source);
  return compiled ? ["--enable-source-maps", compiled] : ["--import", "tsx", source];
}

/** The runner needs neither the model's keys nor the database: it gets none of them. */
export function runnerEnvironment(
  env: Record<string, string | undefined>,
  extra: Record<string, string> = {},
): NodeJS.ProcessEnv {
  const out: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(env)) {
    if (
      /^(ANTHROPIC_|OPENAI_|DATABASE_URL$|QUIVER_RUNNER_TOKENS?$|QUIVER_SMTP_URL$|QUIVER_PROVIDER$|QUIVER_MODEL$)/.test(
        name,
      )
    )
      continue;
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
