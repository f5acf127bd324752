// The exec server (and the namespace relay, netns-relay.ts, and the workspace's watch server,
// workspace/watch-server.ts) as one plain JavaScript file each, so a sandbox starts it with bare
// `node`:
// under tsx every sandbox also loaded the TypeScript loader and ran an esbuild service beside
// it (107 MB for the pair, against 50 MB bundled) and compiled its sources again at each start.
// Built once per runner process with the esbuild tsx itself uses, into node_modules/.cache
// (inside the checkout, which every sandbox sees read-only), under a name that is the hash of
// its content, so runners of different versions never share a stale file. Where the build or
// the write fails (a read-only install), the sandbox runs the sources under tsx as before.
import { createHash } from "node:crypto";
import { mkdirSync, renameSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

export const PROJECT_ROOT = fileURLToPath(new URL("../../", import.meta.url)).replace(/\/$/, "");
const TSX = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;

/** The Node arguments that start an exec server (after the node binary). */
export interface ExecServerStart {
  args: string[];
  bundled: boolean;
}

type Entry = "exec-server" | "netns-relay" | "watch-server";
const built = new Map<Entry, Promise<ExecServerStart>>();

export function execServerStart(log: (line: string) => void = () => undefined): Promise<ExecServerStart> {
  return entryStart("exec-server", log);
}

export function relayStart(log: (line: string) => void = () => undefined): Promise<ExecServerStart> {
  return entryStart("netns-relay", log);
}

export function watchServerStart(log: (line: string) => void = () => undefined): Promise<ExecServerStart> {
  return entryStart("watch-server", log);
}

/**
 * What a sandbox must show of Quiver's (masked) install for the watch server to load: its bundle
 * and @parcel's folder, whose native binding it requires by name at run time; under tsx, the
 * whole checkout.
 */
export function watchServerFiles(start: ExecServerStart): string[] {
  if (!start.bundled) return [PROJECT_ROOT];
  return [start.args[0], dirname(dirname(createRequire(import.meta.url).resolve("@parcel/watcher/package.json")))];
}

const SOURCES: Record<Entry, string> = {
  "exec-server": "./exec-server.ts",
  "netns-relay": "./netns-relay.ts",
  "watch-server": "../workspace/watch-server.ts",
};

function entryStart(name: Entry, log: (line: string) => void): Promise<ExecServerStart> {
  const source = fileURLToPath(new URL(SOURCES[name], import.meta.url));
  let start = built.get(name);
  if (!start) {
    start = build(name, source).catch((err: unknown) => {
      log(`${name} runs under tsx: bundling it failed (${(err as Error).message})`);
      return { args: ["--import", TSX, source], bundled: false };
    });
    built.set(name, start);
  }
  return start;
}

async function build(name: Entry, source: string): Promise<ExecServerStart> {
  const esbuild = (await import(
    pathToFileURL(createRequire(createRequire(import.meta.url).resolve("tsx")).resolve("esbuild")).href
  )) as typeof import("esbuild");
  const out = await esbuild.build({
    entryPoints: [source],
    bundle: true,
    platform: "node",
    format: "esm",
    target: `node${process.versions.node.split(".")[0]}`,
    write: false,
    logLevel: "silent",
    // @parcel/watcher picks its native binding by name at run time: that require stays a real one.
    external: ["*.node"],
    banner: {
      js: 'import { createRequire as __quiverRequire } from "node:module"; const require = __quiverRequire(import.meta.url);',
    },
  });
  const code = out.outputFiles[0].contents;
  const dir = join(PROJECT_ROOT, "node_modules", ".cache", "quiver");
  const file = join(dir, `${name}-${createHash("sha256").update(code).digest("hex").slice(0, 16)}.mjs`);
  if (!exists(file)) {
    mkdirSync(dir, { recursive: true });
    // Whole or absent: another runner may be starting this very file.
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, code);
    renameSync(tmp, file);
  }
  return { args: [file], bundled: true };
}

function exists(file: string): boolean {
  try {
    return statSync(file).isFile();
  } catch {
    return false;
  }
}
