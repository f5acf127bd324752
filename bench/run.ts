// Runs the benchmarks: every bench/**/*.bench.ts in sequence, each in its own process so one
// file's JIT state and garbage never colour another's figures. `npm run bench -- name` runs
// only the files whose path contains `name`.
import { spawn } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL(".", import.meta.url));

function findBenches(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir).sort()) {
    const path = join(dir, entry);
    if (entry === "node_modules" || entry.startsWith(".")) continue;
    if (statSync(path).isDirectory()) out.push(...findBenches(path));
    else if (entry.endsWith(".bench.ts")) out.push(path);
  }
  return out;
}

function runOne(file: string): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--import", "tsx", file], { stdio: "inherit" });
    const forward = (signal: NodeJS.Signals) => child.kill(signal);
    process.once("SIGINT", forward);
    process.once("SIGTERM", forward);
    child.on("exit", (code, signal) => {
      process.off("SIGINT", forward);
      process.off("SIGTERM", forward);
      resolve(code ?? (signal ? 1 : 0));
    });
  });
}

const filters = process.argv.slice(2);
const benches = findBenches(root).filter((f) => filters.length === 0 || filters.some((q) => relative(root, f).includes(q)));
if (benches.length === 0) {
  console.error(`No benchmark matches ${filters.join(", ")}. Available: ${findBenches(root).map((f) => relative(root, f)).join(", ")}`);
  process.exit(1);
}
const failed: string[] = [];
for (const file of benches) {
  const name = relative(root, file);
  console.log(`\n=== ${name} ===`);
  const code = await runOne(file);
  if (code !== 0) failed.push(name);
}
console.log(failed.length === 0 ? `\n${benches.length} benchmark file(s) ran; all goals met.` : `\nGoals missed or errors in: ${failed.join(", ")}`);
process.exitCode = failed.length === 0 ? 0 : 1;
