// Whether this process runs the ahead-of-time build of `npm start` (server/start.mjs), and where
// the compiled form of another entry (the local runner, a worker thread) lies, so a compiled
// server starts compiled children and a tsx server (`npm run dev`, tests) starts tsx ones.
import { existsSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

// `import.meta` itself, not `import.meta.url`: the build rewrites `import.meta.url` to this
// source file's own location, while `meta.url` stays the running file: the bundle when compiled.
const meta = import.meta;
const running = fileURLToPath(meta.url);
const root = fileURLToPath(new URL("../..", import.meta.url)).replace(/\/$/, "");

/** The folder of the running build, or undefined under tsx. */
export const buildDir: string | undefined = running.endsWith(".mjs") ? dirname(running) : undefined;

/** The compiled file of a source entry (`runner/main.ts` → `<build>/runner-main.mjs`) when running compiled and it was built. */
export function compiledEntry(source: string): string | undefined {
  if (!buildDir) return undefined;
  const file = join(buildDir, `${relative(root, source).replace(/\.ts$/, "").replace(/[\\/]/g, "-")}.mjs`);
  return existsSync(file) ? file : undefined;
}
