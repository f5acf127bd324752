// The ahead-of-time build of `npm start` (server/start.mjs): the server, the local runner and the
// worker threads bundled by esbuild into <build root>/<id>/, one plain ES module each, with every
// package left to node_modules (native ones included) and source maps. A build is redone only when
// one of its inputs (the files esbuild read, the lockfile, the tsconfig) changed size or time, so
// a fresh clone or a pull still starts with one command. The build root must lie inside the
// checkout: the bundles find their packages in its node_modules.
// Plain JavaScript on purpose: this is what runs before anything is compiled.
//
// Every module keeps its own location: `import.meta.url` (and .dirname/.filename) in a bundled
// source file are rewritten to that source file's path, so `.txt` descriptions, the Prisma
// client's engine files and paths to the checkout resolve as under tsx. server/build/compiled.ts
// tells the running bundle which compiled entries exist (runner, worker threads).
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = fileURLToPath(new URL("../..", import.meta.url)).replace(/\/$/, "");
/** Sources compiled to one entry each: `server/main.ts` → `server-main.mjs` (server/build/compiled.ts). */
const ENTRIES = [
  "server/main.ts",
  "runner/main.ts",
  "server/hub/event-store-worker.ts",
  "server/db/query-thread-worker.ts",
];
const ALWAYS = ["package-lock.json", "tsconfig.json", "server/build/compile.mjs"];
const currentFileOf = (buildRoot) => join(buildRoot, "current.json");

/** size:mtime of each input; a build is fresh while all of them still match. */
function stamp(paths) {
  const out = {};
  for (const path of paths) {
    try {
      const s = statSync(join(root, path));
      out[path] = `${s.size}:${s.mtimeMs}`;
    } catch {
      out[path] = "missing";
    }
  }
  return out;
}

function current(buildRoot) {
  try {
    const built = JSON.parse(readFileSync(currentFileOf(buildRoot), "utf8"));
    const now = stamp(Object.keys(built.inputs));
    const fresh = Object.entries(built.inputs).every(([path, s]) => now[path] === s);
    return fresh && existsSync(join(buildRoot, built.dir, "server-main.mjs")) ? built.dir : undefined;
  } catch {
    return undefined;
  }
}

/** Rewrites import.meta.{url,dirname,filename} in a source file to that file's own location. */
const keepLocations = (outdir) => ({
  name: "keep-source-locations",
  setup(build) {
    build.onLoad({ filter: /\.tsx?$/ }, (args) => {
      if (args.path.includes("/node_modules/")) return undefined;
      let text = readFileSync(args.path, "utf8");
      if (text.includes("import.meta.")) {
        const url = `new URL(${JSON.stringify(relative(outdir, args.path))}, import.meta.url)`;
        text = text
          .replace(/\bimport\.meta\.url\b/g, `${url}.href`)
          .replace(/\bimport\.meta\.dirname\b/g, `__quiverPath.dirname(__quiverUrl.fileURLToPath(${url}))`)
          .replace(/\bimport\.meta\.filename\b/g, `__quiverUrl.fileURLToPath(${url})`);
        if (text.includes("__quiverPath")) text = `import * as __quiverPath from "node:path";\n${text}`;
        if (text.includes("__quiverUrl")) text = `import * as __quiverUrl from "node:url";\n${text}`;
      }
      return { contents: text, loader: args.path.endsWith("x") ? "tsx" : "ts" };
    });
  },
});

/**
 * Packages stay in node_modules. A subpath of a package without an "exports" map
 * (`vscode-jsonrpc/node`) has no extension, which Node's ES module loader does not guess (tsx
 * did): it is written out to the file that require finds (`vscode-jsonrpc/node.js`).
 */
const externalPackages = {
  name: "external-packages",
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, (args) => {
      const spec = args.path;
      const parts = spec.split("/");
      const nameLength = spec.startsWith("@") ? 2 : 1;
      if (spec.startsWith("node:") || parts.length <= nameLength) return { path: spec, external: true };
      const name = parts.slice(0, nameLength).join("/");
      const require = createRequire(args.importer || join(root, "package.json"));
      try {
        const pkgFile = require.resolve(`${name}/package.json`);
        if (JSON.parse(readFileSync(pkgFile, "utf8")).exports) return { path: spec, external: true };
        const file = require.resolve(spec);
        return { path: `${name}/${relative(dirname(pkgFile), file)}`, external: true };
      } catch {
        return { path: spec, external: true };
      }
    });
  },
};

async function compile(buildRoot, log) {
  // The esbuild tsx itself uses (runner/exec/bundle.ts does the same): not a dependency of ours.
  const require = createRequire(createRequire(import.meta.url).resolve("tsx"));
  const { build } = await import(pathToFileURL(require.resolve("esbuild")).href);
  const id = `${Date.now().toString(36)}-${process.pid}`;
  const outdir = join(buildRoot, id);
  const started = Date.now();
  const result = await build({
    entryPoints: Object.fromEntries(ENTRIES.map((e) => [e.replace(/\.ts$/, "").replace(/\//g, "-"), join(root, e)])),
    outdir,
    outExtension: { ".js": ".mjs" },
    bundle: true,
    platform: "node",
    format: "esm",
    // What is imported dynamically (Prisma's clients, the PostgreSQL driver, the MCP SDK) goes into
    // chunks of its own, packages included, loaded only when first used.
    splitting: true,
    target: `node${process.versions.node.split(".")[0]}`,
    sourcemap: true,
    metafile: true,
    logLevel: "warning",
    absWorkingDir: root,
    plugins: [externalPackages, keepLocations(outdir)],
  });
  const inputs = stamp([
    ...new Set([...Object.keys(result.metafile.inputs).filter((p) => !p.includes("node_modules/")), ...ALWAYS]),
  ]);
  const tmp = `${currentFileOf(buildRoot)}.${process.pid}`;
  writeFileSync(tmp, JSON.stringify({ dir: id, inputs }, null, 1));
  renameSync(tmp, currentFileOf(buildRoot));
  log(`compiled the server (${Object.keys(inputs).length} files) in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  // Older builds go, but the one before stays: a server still running from it may restart its
  // runner or a worker thread from there.
  const dirs = readdirSync(buildRoot).filter((d) => d !== id && statSync(join(buildRoot, d)).isDirectory());
  dirs.sort((a, b) => statSync(join(buildRoot, b)).mtimeMs - statSync(join(buildRoot, a)).mtimeMs);
  for (const old of dirs.slice(1)) rmSync(join(buildRoot, old), { recursive: true, force: true });
  return id;
}

/** Servers started together compile once: the first takes the lock, the others wait for it. */
async function locked(buildRoot, fn) {
  const lock = join(buildRoot, "build.lock");
  for (;;) {
    try {
      closeSync(openSync(lock, "wx"));
      writeFileSync(lock, String(process.pid));
      break;
    } catch (err) {
      if (err.code !== "EEXIST") throw err;
      const holder = Number(readFileSync(lock, "utf8").trim() || NaN);
      if (Number.isInteger(holder) && holder > 0 && !alive(holder)) rmSync(lock, { force: true });
      else await new Promise((r) => setTimeout(r, 200));
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(lock, { force: true });
  }
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === "EPERM";
  }
}

/** The folder of a fresh build under `buildRoot` (its `server-main.mjs` is the server), compiled first when stale. */
export async function compiledServer(buildRoot, log) {
  const fresh = current(buildRoot);
  if (fresh) return join(buildRoot, fresh);
  mkdirSync(buildRoot, { recursive: true });
  const dir = await locked(
    buildRoot,
    async () =>
      current(buildRoot) ??
      (log("compiling the server (first start or changed sources)…"), await compile(buildRoot, log)),
  );
  return join(buildRoot, dir);
}
