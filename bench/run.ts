// Runs the benchmarks: every bench/**/*.bench.ts in sequence, each in its own process so one
// file's JIT state and garbage never colour another's figures. `npm run bench -- name` runs
// only the files whose path contains `name`. At the end, one summary: every goal line the files
// printed (bench/lib goal()), MET or MISSED with its figures, and each goal of issue 31 that no
// file measured (on a full run) as MISSED.
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

interface GoalLine {
  file: string;
  met: boolean;
  name: string;
  detail: string;
}

const GOAL = /^goal (MET|MISSED)\s+(.*?): (.*)$/;

/** Runs one file, its output passed through as it comes; its goal lines are kept for the summary. */
function runOne(file: string, goals: GoalLine[]): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--import", "tsx", file], { stdio: ["inherit", "pipe", "inherit"] });
    const forward = (signal: NodeJS.Signals) => child.kill(signal);
    process.once("SIGINT", forward);
    process.once("SIGTERM", forward);
    let pending = "";
    const scan = (line: string) => {
      const m = GOAL.exec(line);
      if (m) goals.push({ file: relative(root, file), met: m[1] === "MET", name: m[2], detail: m[3] });
    };
    child.stdout!.on("data", (chunk: Buffer) => {
      process.stdout.write(chunk);
      const lines = (pending + chunk.toString("utf8")).split("\n");
      pending = lines.pop()!;
      lines.forEach(scan);
    });
    child.on("exit", (code, signal) => {
      process.off("SIGINT", forward);
      process.off("SIGTERM", forward);
      scan(pending);
      resolve(code ?? (signal ? 1 : 0));
    });
  });
}

/** Issue 31's goals: measured by the goal lines named "#31.<n> …" or printed by the file named. */
const ISSUE_31: [string, string, string][] = [
  ["#31.1", "token-latency.bench", "token relay at 50 sessions, against the bare relay"],
  ["#31.2", "memory-per-token.bench", "memory per streamed token"],
  ["#31.3", "startup.bench", "start-up: warm start ≤ 2× a bare next start"],
  ["#31.4", "pipeline.bench", "batching: batch ≤ 1.2× the slowest call, pipeline overhead ≤ 2 ms"],
  ["#31.5", "tool-search.bench", "tool search against a kept library, minisearch baseline"],
  ["#31.6", "idle-subscribers.bench", "idle cost of 1,000 open pages"],
];

const filters = process.argv.slice(2);
const benches = findBenches(root).filter(
  (f) => filters.length === 0 || filters.some((q) => relative(root, f).includes(q)),
);
if (benches.length === 0) {
  console.error(
    `No benchmark matches ${filters.join(", ")}. Available: ${findBenches(root)
      .map((f) => relative(root, f))
      .join(", ")}`,
  );
  process.exit(1);
}
const failed: string[] = [];
const goals: GoalLine[] = [];
for (const file of benches) {
  const name = relative(root, file);
  console.log(`\n=== ${name} ===`);
  const code = await runOne(file, goals);
  // a file that failed without a missed goal stopped on an error
  if (code !== 0 && !goals.some((g) => g.file === name && !g.met)) failed.push(name);
}
console.log("\n=== summary: every goal ===");
for (const g of goals) console.log(`${g.met ? "MET    " : "MISSED "} ${g.name}: ${g.detail}  (${g.file})`);
if (filters.length === 0) {
  for (const [id, file, what] of ISSUE_31) {
    if (!goals.some((g) => g.name.startsWith(`${id} `) || g.file.includes(file)))
      console.log(`MISSED  ${id} ${what}: not measured by any benchmark`);
  }
}
for (const name of failed) console.log(`ERROR   ${name} stopped before printing all its goals`);
const missed = goals.filter((g) => !g.met).length;
console.log(
  `\n${benches.length} benchmark file(s), ${goals.length} goal(s): ${goals.length - missed} met, ${missed} missed${failed.length ? `, ${failed.length} file(s) failed` : ""}.`,
);
process.exitCode = missed === 0 && failed.length === 0 ? 0 : 1;
