// How the runner starts its own programs on the workspace (ripgrep for search, glob and quick
// open; git for the Changes panel, git_diff, the diff budget and Commit). Those walk the tree by
// name, as any program does, so a folder swapped for a link while they run can lead them out.
// When the runner's commands are sandboxed (the exec extension says so through useSandbox),
// they run in the same sandbox, network off: whatever a race leads them to is then only what
// the agent's own commands can already read, and all they can write is the workspace. Nothing
// of the runner's on the workspace runs outside that sandbox when there is one. Unsandboxed (the
// agent's commands then are too), they start in the directory the root's descriptor holds and
// read by name below it, as the person's own commands do.
import type { WorkspaceFs } from "./fs-at";

export interface HelperSpawn {
  file: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
}

/** Wraps argv for the sandbox, started in `cwd` (a real path inside the workspace). */
export type SandboxWrap = (argv: string[], opts: { cwd: string } & SpawnOpts) => { file: string; args: string[] };

export interface SpawnOpts {
  /** Files the program needs that the sandbox hides (ripgrep's binary inside Quiver's install). */
  readOnly?: string[];
  /** Folders of the runner's own bound writable (the checkpoints' shadow repository). */
  writable?: string[];
  /** Under the commands' resource limits (runner/exec/helper-sandbox.ts): for git, which a
   *  repository can make run programs. */
  limited?: boolean;
  /** A seccomp program on this descriptor of the spawned process (runner/exec/seccomp.ts). */
  seccompFd?: number;
  /** The host's network (default: none): only for the runner's network git (git-remote.ts),
   *  which runs no program the agent chose. */
  network?: boolean;
}

// Enough for git and ripgrep; nothing of the runner's own secrets (its token, model keys).
const KEEP = /^(PATH|HOME|USER|LOGNAME|LANG|LANGUAGE|TZ|TERM|LC_[A-Z]+|GIT_(AUTHOR|COMMITTER)_(NAME|EMAIL|DATE))$/;

export class Helpers {
  private wrap?: SandboxWrap;
  private readonly sandboxListeners = new Set<() => void>();

  constructor(private readonly files: WorkspaceFs) {}

  /** From the exec extension, when its commands run in a sandbox. */
  useSandbox(wrap: SandboxWrap): void {
    this.wrap = wrap;
    for (const listener of this.sandboxListeners) listener();
  }

  /** Calls `listener` when a sandbox is given (the watcher then moves into it). */
  onSandbox(listener: () => void): () => void {
    this.sandboxListeners.add(listener);
    return () => this.sandboxListeners.delete(listener);
  }

  get sandboxed(): boolean {
    return this.wrap !== undefined;
  }

  /** The command line for `argv` run at the workspace root, in the sandbox when there is one. */
  spawn(argv: string[], env: Record<string, string>, opts: SpawnOpts = {}): HelperSpawn {
    const base: Record<string, string | undefined> = {};
    for (const [k, v] of Object.entries(process.env)) if (KEEP.test(k)) base[k] = v;
    const full = { ...base, ...env } as NodeJS.ProcessEnv;
    if (this.wrap) return { ...this.wrap(argv, { ...opts, cwd: this.files.root }), cwd: "/", env: full };
    return { file: argv[0], args: argv.slice(1), cwd: this.files.cwd, env: full };
  }
}
