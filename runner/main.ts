// The runner process: `tsx runner/main.ts --server ws://host:port/runner --token T --workspace DIR`
// (token also from QUIVER_RUNNER_TOKEN). Serves one workspace to the server it connects to,
// reconnecting when the server goes away; exits on SIGTERM/SIGINT/SIGHUP or when --parent-pid dies.
// With `--root DIR` (`--label x`, `--capacity N`, `--disk-limits kernel|measured`) it serves many,
// each in DIR/<id> and confined to it (runner/root/); a `--workspace` folder then is the default
// workspace, adopted in place.
// Refuses to start (exit 2) unsandboxed under QUIVER_SANDBOX=auto when the server is off loopback,
// and with --root unsandboxed unless QUIVER_SANDBOX=off says so. It logs to stderr (runner/log.ts)
// at QUIVER_LOG_LEVEL, and refuses an invalid level like any other bad configuration. Its own key
// (identity-key.ts: --key-file, QUIVER_RUNNER_KEY_FILE, else in its home) proves its id to a server.
// What its launcher left open without close-on-exec is closed first (inherited-fds.ts).
import { createHash } from "node:crypto";
import { readFileSync, realpathSync } from "node:fs";
import { hostname } from "node:os";
import { dirname, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { defaultRunnerId } from "../server/protocol/runner-id";
import { RunnerClient } from "./client";
import { execConfigFromEnv } from "./exec";
import { WorkspaceNetwork } from "./exec/netns";
import { checkUnsandboxed, SandboxConfigError, sandboxInfo, type SandboxMode } from "./exec/sandbox";
import { StoreError, WorkspaceStore } from "./root/store";
import { Workspaces } from "./root/workspaces";
import { kernelLimitsAvailable } from "./workspace/disk-image";
import { Workspace, WorkspaceError, type WorkspaceOptions } from "./workspace/workspace";
import { configureArchiveSource } from "./workspace/archive-source";
import { levelFromEnv, logFn, rootLog, scoped } from "./log";
import { safePath } from "./safe-path";
import { closeInheritedDescriptors } from "./inherited-fds";
import { defaultKeyFile, KEY_FILE_VAR, KeyFileError, loadRunnerKey, type RunnerKey } from "./identity-key";

const EXIT_CONFIG = 2;
const EXIT_AUTH = 3;

const log = scoped("runner");

// Before anything is started: no program of the runner's may get what its launcher left open.
const inherited = closeInheritedDescriptors();
if (inherited.length > 0) log.debug(`closed descriptors inherited without close-on-exec: ${inherited.join(", ")}`);

function fail(message: string, code = EXIT_CONFIG): never {
  log.error(message);
  process.exit(code);
}

function positiveInt(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) fail(`--${name} must be a positive integer (got ${JSON.stringify(value)})`);
  return n;
}

async function main(): Promise<void> {
  const level = levelFromEnv();
  if (!level.ok) fail(level.message);
  rootLog.level = level.level;
  let args;
  try {
    args = parseArgs({
      options: {
        server: { type: "string" },
        token: { type: "string" },
        workspace: { type: "string" },
        id: { type: "string" },
        "parent-pid": { type: "string" },
        "diff-max-bytes": { type: "string" },
        "diff-max-lines": { type: "string" },
        "diff-max-files": { type: "string" },
        "idle-timeout-ms": { type: "string" },
        root: { type: "string" },
        label: { type: "string", multiple: true },
        capacity: { type: "string" },
        "key-file": { type: "string" },
        "disk-limits": { type: "string" },
      },
      strict: true,
    }).values;
  } catch (err) {
    fail((err as Error).message);
  }
  const server = args.server ?? process.env.QUIVER_RUNNER_SERVER;
  const token = args.token ?? process.env.QUIVER_RUNNER_TOKEN;
  const dir = args.workspace ?? process.env.QUIVER_RUNNER_WORKSPACE;
  if (!server) fail("missing --server ws://host:port/runner");
  if (!/^wss?:\/\//.test(server)) fail(`--server must be a ws:// or wss:// URL (got ${JSON.stringify(server)})`);
  if (!token) fail("missing token: pass --token or set QUIVER_RUNNER_TOKEN");
  // workspace.create from an uploaded archive fetches it from this server with this token.
  configureArchiveSource({ server, token });
  const rootDir = args.root ?? process.env.QUIVER_RUNNER_ROOT;
  if (!dir && !rootDir) fail("missing --workspace DIR (or --root DIR)");
  if (!rootDir && (args.label?.length || args.capacity)) fail("--label and --capacity need --root DIR");
  const labels = [...new Set(args.label ?? [])];
  for (const l of labels)
    if (!/^[a-z0-9][a-z0-9._-]{0,63}$/i.test(l))
      fail(`--label takes 1-64 of letters, digits, '.', '_' and '-' (got ${JSON.stringify(l)})`);
  const capacity = positiveInt("capacity", args.capacity);
  const diskLimits = args["disk-limits"] ?? process.env.QUIVER_RUNNER_DISK_LIMITS ?? "measured";
  if (diskLimits !== "measured" && diskLimits !== "kernel")
    fail(`--disk-limits is measured or kernel (got ${JSON.stringify(diskLimits)})`);
  if (diskLimits === "kernel" && !rootDir) fail("--disk-limits kernel needs --root DIR");
  const parentPid = positiveInt("parent-pid", args["parent-pid"]);
  // Watched from serve(), once it is known whether in the commands' sandbox (one crawl, not two).
  const workspaceOptions: WorkspaceOptions = {
    watch: "when-served",
    budget: {
      maxBytes: positiveInt("diff-max-bytes", args["diff-max-bytes"]),
      maxLines: positiveInt("diff-max-lines", args["diff-max-lines"]),
      maxFiles: positiveInt("diff-max-files", args["diff-max-files"]),
    },
  };

  // Before anything is started: the programs the runner starts itself (bwrap, bash, setpriv,
  // git…), which run outside the sandbox, are found only in folders the agent cannot write.
  process.env.PATH = safePath(process.env.PATH, [dir, rootDir]);

  let workspace: Workspace | undefined;
  let store: WorkspaceStore | undefined;
  try {
    if (dir) workspace = await Workspace.open(dir, workspaceOptions);
    if (rootDir) store = await WorkspaceStore.open(rootDir, { kernelLimits: diskLimits === "kernel" });
  } catch (err) {
    if (err instanceof WorkspaceError || err instanceof StoreError) fail(err.message);
    throw err;
  }
  if (store && diskLimits === "kernel" && !kernelLimitsAvailable(store.path))
    fail(
      "--disk-limits kernel mounts an image per workspace: it needs root, loop devices (/dev/loop-control) and mkfs.ext4, which this machine does not give; use --disk-limits measured",
    );
  if (store && workspace && (store.path === workspace.root || workspace.root.startsWith(`${store.path}/`))) {
    fail(`--workspace ${workspace.root} lies inside --root ${store.path}; give a folder outside it`);
  }
  const key = runnerKey(args["key-file"] ?? process.env[KEY_FILE_VAR], [workspace?.root, store?.path]);

  const mode = (process.env.QUIVER_SANDBOX as SandboxMode | undefined) ?? "auto";
  let sandbox;
  try {
    sandbox = sandboxInfo(execConfigFromEnv().sandbox);
    checkUnsandboxed(mode, sandbox, { host: process.env.HOST, serverUrl: server });
  } catch (err) {
    if (err instanceof SandboxConfigError) fail(err.message);
    throw err;
  }
  if (store && !sandbox.available && mode !== "off") {
    fail(
      `--root needs the sandbox to keep workspaces apart, and ${sandbox.reason ?? "it is unavailable"}; install bubblewrap, or set QUIVER_SANDBOX=off to serve them unconfined on purpose`,
    );
  }
  if (!sandbox.available)
    log.warn(
      `commands and terminals run UNSANDBOXED, with this runner's full rights: ${sandbox.reason ?? "no sandbox"}`,
    );

  const shutdown = new AbortController();
  // Workspaces are served before the client exists; their frames go through it once it does.
  const link: { client?: RunnerClient } = {};
  const workspaces = new Workspaces({
    serverUrl: server,
    signal: shutdown.signal,
    send: (m) => link.client?.sendFromWorkspace(m) ?? false,
    onChange: (id, paths, version) => link.client?.filesChanged(id, paths, version),
    defaultWorkspace: workspace,
    store,
    workspaceOptions,
    labels,
    capacity,
    // Beside the key, outside every sandbox; one file per default workspace folder.
    previewOrigins:
      key && workspace
        ? join(
            dirname(key.path),
            `preview-origins-${createHash("sha256").update(workspace.root).digest("hex").slice(0, 16)}.json`,
          )
        : undefined,
  });
  let defaultSandbox;
  try {
    defaultSandbox = (await workspaces.default)?.sandbox;
  } catch (err) {
    if (err instanceof SandboxConfigError) fail(err.message);
    throw err;
  }
  // A root without a default workspace makes no namespace until a workspace is used: its mode is known already.
  const network = new WorkspaceNetwork({
    sandboxed: sandbox.available,
    hostNetwork: execConfigFromEnv().hostNetwork,
    log: () => {},
  });
  if (store && network.mode === "host")
    log.warn(
      `previews and commands granted network share the host's: workspaces under --root are not kept apart on the network (${network.reason})`,
    );

  const version = (JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string })
    .version;
  const servedPath = workspace?.root ?? store?.path ?? "";
  const runnerId = args.id ?? defaultRunnerId(hostname(), servedPath);
  const client = (link.client = new RunnerClient({
    url: server,
    token,
    runnerId,
    version,
    workspaces,
    workspacePath: servedPath,
    key,
    sandbox: defaultSandbox ?? {
      available: sandbox.available,
      kind: sandbox.kind,
      ...(sandbox.reason ? { reason: sandbox.reason } : {}),
      network: network.mode,
      ...(network.reason ? { networkReason: network.reason } : {}),
    },
    log: logFn("client"),
    onAuthRefused: (status) => void stop(`the server refused the token (HTTP ${status})`, EXIT_AUTH),
    idleTimeoutMs: positiveInt("idle-timeout-ms", args["idle-timeout-ms"]),
  }));

  let stopping = false;
  async function stop(reason: string, code = 0): Promise<void> {
    if (stopping) return;
    stopping = true;
    log.info(`stopping: ${reason}`);
    clearInterval(parentWatch);
    shutdown.abort(new Error(reason));
    client.stop();
    await workspaces.dispose().catch(() => {});
    process.exit(code);
  }

  // SIGHUP: the terminal it runs in closed; its default would skip the clean stop.
  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.on(signal, () => void stop(signal));
  // A runner started by the server must not outlive it, even after a SIGKILL of the server.
  const parentWatch = setInterval(() => {
    if (parentPid === undefined) return;
    // Not process.ppid: under `tsx` the direct parent is tsx's own launcher process.
    try {
      process.kill(parentPid, 0);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ESRCH") void stop(`parent process ${parentPid} is gone`);
    }
  }, 500);
  if (parentPid === undefined) clearInterval(parentWatch);

  const ops = [...workspaces.ops.names(), ...((await workspaces.default)?.registry.names() ?? [])];
  log.debug({ sandbox: sandbox.kind, network: network.mode, labels, capacity, parentPid }, "configuration");
  log.info(
    `serving ${store ? `workspaces under ${store.path}${workspace ? ` and ${workspace.root} as "default"` : ""}` : servedPath} as ${runnerId}${ops.length ? ` (ops: ${ops.join(", ")})` : ""}`,
  );
  client.start();
}

/**
 * This runner's key (identity-key.ts): `given` (--key-file, QUIVER_RUNNER_KEY_FILE) or the default
 * in its home. Refused inside a served folder, where commands and the agent read and write; and
 * named in QUIVER_RUNNER_KEY_FILE for exec/host-secrets.ts, which masks it in every sandbox.
 */
function runnerKey(given: string | undefined, served: (string | undefined)[]): RunnerKey | undefined {
  const path = resolve(given ?? defaultKeyFile());
  let folder: string;
  try {
    folder = realpathSync(dirname(path));
  } catch {
    folder = dirname(path);
  }
  for (const dir of served)
    if (dir && (folder === dir || folder.startsWith(`${dir}/`)))
      fail(`the runner key ${path} lies inside ${dir}, which commands can read: give --key-file a path outside it`);
  process.env[KEY_FILE_VAR] = path;
  try {
    const key = loadRunnerKey(path);
    if (key.created) log.info(`made this runner's key in ${path}`);
    if (key.setAside)
      log.warn(
        `the runner key ${path} held no usable key: kept as ${key.setAside}, and a new key was made (a server that bound this runner's id to the old one refuses it until an admin unbinds it)`,
      );
    return key;
  } catch (err) {
    if (!(err instanceof KeyFileError)) throw err;
    if (given !== undefined) fail(err.message);
    // A home that cannot be written (a service account's) leaves a runner with a token of its own working.
    log.warn(
      `${err.message}; connecting without a key (a server binding runner ids to keys refuses it unless its token is its own)`,
    );
    return undefined;
  }
}

main().catch((err: unknown) => {
  log.error({ err }, "crashed");
  process.exit(1);
});
