// Lazy stack-trace mapping of the compiled server (stack-maps.mjs): a frame of a bundle under the
// build folder reads as its TypeScript source's line, found through the bundle's map only when a
// trace is printed; frames elsewhere, and bundles without a map, stay as V8 writes them.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const dir = mkdtempSync(join(tmpdir(), "quiver-stack-maps-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// The esbuild tsx uses, as compile.mjs does.
const esbuild = createRequire(createRequire(import.meta.url).resolve("tsx"))("esbuild") as typeof import("esbuild");

const source = join(dir, "src", "thrower.ts");
mkdirSync(join(dir, "src"));
writeFileSync(
  source,
  [
    "// a source of a few lines, so that a bundle's line is not its own",
    "interface Shape { width: number }",
    "export function explode(shape: Shape): never {",
    "  const area: number = shape.width * 2;",
    "  throw new Error(`too wide: ${area}`);",
    "}",
    "",
  ].join("\n"),
);
const build = join(dir, "build");
const bundle = (outfile: string) =>
  esbuild.buildSync({ entryPoints: [source], bundle: true, format: "esm", platform: "node", sourcemap: true, outfile });
bundle(join(build, "thrower.mjs"));
// The same bundle outside the build folder: not mapped.
bundle(join(dir, "elsewhere", "thrower.mjs"));

/** Runs a fresh node that installs the mapping for `build`, throws through `bundle`, prints the stack. */
function stackThrough(bundle: string): string {
  const script = `
import { mapStackTraces } from ${JSON.stringify(pathToFileURL(join(import.meta.dirname, "stack-maps.mjs")).href)};
mapStackTraces(${JSON.stringify(build)});
const { explode } = await import(${JSON.stringify(pathToFileURL(bundle).href)});
try { explode({ width: 21 }); } catch (err) { console.log(err.stack); }`;
  const run = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
  expect(run.stderr).toBe("");
  return run.stdout;
}

describe("stack traces of the compiled server", () => {
  it("point into the TypeScript source for frames of a bundle under the build folder", () => {
    const stack = stackThrough(join(build, "thrower.mjs"));
    expect(stack.split("\n")[0]).toBe("Error: too wide: 42");
    expect(stack).toContain(`explode (${source}:5:9)`);
    expect(stack).not.toContain("thrower.mjs");
  });

  it("leave other files' frames as they are", () => {
    const stack = stackThrough(join(dir, "elsewhere", "thrower.mjs"));
    expect(stack).toMatch(/explode \(file:\/\/.*elsewhere\/thrower\.mjs:\d+:\d+\)/);
  });

  it("leave a bundle without its map as it is", () => {
    rmSync(join(build, "thrower.mjs.map"));
    const stack = stackThrough(join(build, "thrower.mjs"));
    expect(stack).toMatch(/explode \(file:\/\/.*build\/thrower\.mjs:\d+:\d+\)/);
  });
});
