// The workspaces a runner serves, by id, and the frames routed to them. A plain runner has one,
// its `--workspace` folder, used by every frame (a frame naming a workspace is refused). A
// `--root DIR` runner keeps workspace W in DIR/W (store.ts), opened on first use from DIR's
// descriptor without following links, each served on its own (served.ts): file ops from its
// descriptor, sandboxes that bind only its folder with DIR and the default workspace masked,
// its own PID namespaces, network namespace and preview. Its `--workspace` folder, when given,
// is the default workspace, adopted in place as id "default" (never moved, never deleted).
import type { RunnerToServer } from "../../server/protocol/runner";
import {
  WORKSPACE_CREATE_OP,
  WORKSPACE_DELETE_OP,
  WORKSPACE_LIMIT_OP,
  WORKSPACE_USAGE_OP,
  WorkspaceCreateInput,
  WorkspaceDeleteInput,
  WorkspaceLimitInput,
  WorkspaceUsageInput,
  type WorkspaceDeleteResult,
  type WorkspaceEntry,
  type WorkspaceUsageResult,
} from "../../server/protocol/workspace-ops";
import { forgetCheckpointsOf } from "../checkpoints/forget";
import { logFn } from "../log";
import { defineOp, OpRegistry } from "../ops";
import { serve, type ServeOptions, type Served } from "../served";
import { DiskLimit } from "../workspace/disk-limit";
import { Workspace, type WorkspaceOptions } from "../workspace/workspace";
import { fillerFor, SourceError } from "./sources";
import { folderBytes, StoreError, type WorkspaceStore } from "./store";

export const DEFAULT_WORKSPACE_ID = "default";

export class WorkspaceRefused extends Error {}

export interface WorkspacesOptions extends Omit<ServeOptions, "hide" | "confined"> {
  /** The `--workspace` folder: the only one (plain runner) or the default one (`--root`). */
  defaultWorkspace?: Workspace;
  store?: WorkspaceStore;
  workspaceOptions?: WorkspaceOptions;
  labels?: string[];
  capacity?: number;
  /** Called with each workspace's file changes (id undefined: the default workspace). */
  onChange(workspaceId: string | undefined, paths: string[], version: number): void;
}

export class Workspaces {
  /** workspace.create / delete / usage: served by a `--root` runner only. */
  readonly ops = new OpRegistry();
  private readonly open = new Map<string, Promise<Served>>();
  /** One create, open or delete at a time per id. */
  private readonly locks = new Map<string, Promise<unknown>>();
  private defaultServed?: Promise<Served>;
  /** Disk limits of the workspaces served now (workspace.limit changes them live). */
  private readonly limits = new Map<string, DiskLimit>();
  /** Counts of workspaces' bytes under way: every IDE open on a workspace asks every 30 s and after file events. */
  private readonly counting = new Map<string, Promise<number>>();

  constructor(private readonly o: WorkspacesOptions) {
    if (o.defaultWorkspace) {
      const ws = o.defaultWorkspace;
      ws.onChange((paths, version) => o.onChange(undefined, paths, version));
      this.defaultServed = serve(ws, { ...o, hide: o.store ? [o.store.path] : [], confined: false });
    }
    if (o.store) this.registerOps(o.store);
  }

  get root(): boolean {
    return this.o.store !== undefined;
  }

  /** The default workspace's served form, if there is one (a plain runner always has it). */
  get default(): Promise<Served> | undefined {
    return this.defaultServed;
  }

  /** The workspace a frame names (undefined: the default one); throws WorkspaceRefused saying why not. */
  async get(id: string | undefined): Promise<Served> {
    if (id === undefined || (id === DEFAULT_WORKSPACE_ID && this.defaultServed)) {
      if (this.defaultServed) return this.defaultServed;
      throw new WorkspaceRefused("this runner serves workspaces by id (--root); the request names none");
    }
    const store = this.o.store;
    if (!store)
      throw new WorkspaceRefused(
        `this runner serves one folder (no --root); it has no workspace ${JSON.stringify(id)}`,
      );
    const known = this.open.get(id);
    if (known) return known;
    return this.locked(id, async () => {
      const again = this.open.get(id);
      if (again) return again;
      const fd = store.openDir(id);
      if (fd === undefined) throw new WorkspaceRefused(`workspace ${id} does not exist on this runner`);
      const ws = Workspace.fromFd(store.pathOf(id), fd, this.o.workspaceOptions);
      ws.onChange((paths, version) => this.o.onChange(id, paths, version));
      const limitBytes = await store.limitOf(id).catch(() => undefined);
      if (limitBytes)
        this.limits.set(
          id,
          this.diskLimit(store, id, () => ws.files.cwd, limitBytes),
        );
      const hide = [store.path, ...(this.o.defaultWorkspace ? [this.o.defaultWorkspace.root] : [])];
      const served = serve(ws, { ...this.o, hide, confined: true, diskLimit: () => this.limits.get(id) });
      this.open.set(id, served);
      served.catch(() => this.open.delete(id));
      return served;
    });
  }

  /** Every workspace served now (for connection changes and shutdown). */
  async all(): Promise<Served[]> {
    const list = [...(this.defaultServed ? [this.defaultServed] : []), ...this.open.values()];
    return (await Promise.allSettled(list)).flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
  }

  /** What hello says about workspaces (nothing more for a plain runner). */
  async helloFacts(): Promise<Partial<Extract<RunnerToServer, { type: "hello" }>>> {
    const store = this.o.store;
    if (!store) return {};
    const workspaces: WorkspaceEntry[] = [];
    const own = this.o.defaultWorkspace;
    if (own)
      workspaces.push({
        id: DEFAULT_WORKSPACE_ID,
        bytesUsed: await folderBytes(own.files.cwd).catch(() => 0),
        default: true,
      });
    for (const id of await store.list()) workspaces.push({ id, bytesUsed: await store.usage(id).catch(() => 0) });
    return {
      root: true,
      labels: this.o.labels ?? [],
      workspaces,
      freeDiskBytes: store.freeDiskBytes(),
      ...(this.o.capacity ? { capacity: this.o.capacity } : {}),
    };
  }

  async dispose(): Promise<void> {
    for (const served of await this.all()) await served.dispose();
    this.open.clear();
    this.o.store?.close();
  }

  /**
   * The workspace's bytes, counted at most once at a time: the count of its disk limit when it
   * has one served (a finished one up to 2 s old, else the limit's next walk), else a walk shared
   * by everyone who asks while it runs.
   */
  private bytesUsed(store: WorkspaceStore, id: string): Promise<number> {
    const limit = this.limits.get(id);
    if (limit) return limit.recent(2_000);
    let counting = this.counting.get(id);
    if (!counting) {
      counting = store.usage(id).finally(() => this.counting.delete(id));
      this.counting.set(id, counting);
    }
    return counting;
  }

  /** Stops serving a workspace (its commands and terminals end); whether it was served. */
  private async stop(id: string): Promise<boolean> {
    const served = this.open.get(id);
    this.open.delete(id);
    this.limits.delete(id);
    if (served) await (await served.catch(() => undefined))?.dispose();
    return served !== undefined;
  }

  /** The kernel's limit when the workspace's image holds it (--disk-limits kernel), else measured. */
  private diskLimit(store: WorkspaceStore, id: string, root: () => string, limitBytes: number): DiskLimit {
    return new DiskLimit(root, { limitBytes, kernel: store.kernelHolds(id, limitBytes) });
  }

  private locked<T>(id: string, fn: () => Promise<T>): Promise<T> {
    const run = (this.locks.get(id) ?? Promise.resolve()).then(fn);
    const tail = run.catch(() => undefined);
    this.locks.set(id, tail);
    void tail.then(() => this.locks.get(id) === tail && this.locks.delete(id));
    return run;
  }

  private registerOps(store: WorkspaceStore): void {
    const usage = async (id: string): Promise<WorkspaceUsageResult> => {
      const own = this.o.defaultWorkspace;
      if (id === DEFAULT_WORKSPACE_ID && own)
        return { id, bytesUsed: await folderBytes(own.files.cwd), default: true, freeDiskBytes: store.freeDiskBytes() };
      const limit = await store.limitOf(id);
      return {
        id,
        bytesUsed: await this.bytesUsed(store, id),
        freeDiskBytes: store.freeDiskBytes(),
        ...(limit ? { diskLimitBytes: limit } : {}),
      };
    };
    const ok = (value: unknown) => ({ ok: true, output: JSON.stringify(value) });
    const refuse = (err: unknown) => {
      if (err instanceof StoreError || err instanceof SourceError || err instanceof WorkspaceRefused)
        return { ok: false, output: err.message };
      throw err;
    };
    this.ops.register({
      [WORKSPACE_CREATE_OP]: defineOp({
        input: WorkspaceCreateInput,
        run: async ({ workspaceId, source, diskLimitBytes }, ctx) => {
          try {
            if (workspaceId === DEFAULT_WORKSPACE_ID && this.o.defaultWorkspace)
              throw new WorkspaceRefused("workspace default is this runner's --workspace folder; it exists");
            const filler = await fillerFor(source.kind);
            if (!filler) throw new WorkspaceRefused(`this runner cannot make a workspace from a ${source.kind} source`);
            await this.locked(workspaceId, async () => {
              const held = await store.list();
              if (this.o.capacity && !held.includes(workspaceId) && held.length >= this.o.capacity) {
                throw new WorkspaceRefused(
                  `this runner is full: it holds ${held.length} workspaces, its capacity (--capacity ${this.o.capacity})`,
                );
              }
              await store.create(
                workspaceId,
                (staging) =>
                  filler({
                    workspaceId,
                    source,
                    staging,
                    signal: ctx.signal,
                    progress: (line) => ctx.progress(`${line}\n`),
                  }),
                diskLimitBytes,
              );
              // After the create: a create refused for an existing id must not change that one's limit.
              await store.setLimit(workspaceId, diskLimitBytes);
            });
            return ok(await usage(workspaceId));
          } catch (err) {
            return refuse(err);
          }
        },
      }),
      [WORKSPACE_DELETE_OP]: defineOp({
        input: WorkspaceDeleteInput,
        run: async ({ workspaceId }) => {
          try {
            if (workspaceId === DEFAULT_WORKSPACE_ID && this.o.defaultWorkspace)
              throw new WorkspaceRefused(
                "workspace default is this runner's --workspace folder; the runner never deletes it",
              );
            const result = await this.locked(workspaceId, async (): Promise<WorkspaceDeleteResult> => {
              // Its processes first: nothing may keep writing into the folder being removed.
              const stopped = await this.stop(workspaceId);
              const existed = await store.delete(workspaceId);
              await forgetCheckpointsOf(store.pathOf(workspaceId));
              await store.setLimit(workspaceId, undefined);
              return { id: workspaceId, existed, stopped };
            });
            return ok(result);
          } catch (err) {
            return refuse(err);
          }
        },
      }),
      [WORKSPACE_LIMIT_OP]: defineOp({
        input: WorkspaceLimitInput,
        run: async ({ workspaceId, diskLimitBytes }) => {
          try {
            if (workspaceId === DEFAULT_WORKSPACE_ID && this.o.defaultWorkspace)
              throw new WorkspaceRefused("the default workspace (--workspace) has no disk limit on this runner");
            return await this.locked(workspaceId, async () => {
              if (!store.exists(workspaceId))
                throw new WorkspaceRefused(`workspace ${workspaceId} does not exist on this runner`);
              // Where the image grows only at its next mount, the old size holds the kernel's line
              // until then and the new limit is measured (images.ts).
              if (diskLimitBytes && store.growImage(workspaceId, diskLimitBytes) === "pending")
                logFn("workspaces")(`workspace ${workspaceId}'s disk grows to the new limit at its next mount`);
              await store.setLimit(workspaceId, diskLimitBytes ?? undefined);
              const live = this.limits.get(workspaceId);
              const kernel = diskLimitBytes ? store.kernelHolds(workspaceId, diskLimitBytes) : false;
              if (live && diskLimitBytes && live.kernel === kernel) live.limitBytes = diskLimitBytes;
              else if (diskLimitBytes && this.open.has(workspaceId)) {
                const served = await this.open.get(workspaceId)!;
                const root = () => served.workspace.files.cwd;
                this.limits.set(workspaceId, this.diskLimit(store, workspaceId, root, diskLimitBytes));
              } else if (!diskLimitBytes) this.limits.delete(workspaceId);
              return ok(await usage(workspaceId));
            });
          } catch (err) {
            return refuse(err);
          }
        },
      }),
      [WORKSPACE_USAGE_OP]: defineOp({
        input: WorkspaceUsageInput,
        run: async ({ workspaceId }) => {
          try {
            return ok(await usage(workspaceId));
          } catch (err) {
            return refuse(err);
          }
        },
      }),
    });
  }
}
