// The helpers of a server process run below its main thread, and get its priority back when the
// server stops. Checked in a process of its own
// (the test runner's threads are not ours to lower), started at nice 0 and at nice 5, with one
// worker thread started as the server starts its own (db/thread.ts).
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { HELPER_NICE, WORKER_NICE } from "./priority";

const priority = new URL("./priority.ts", import.meta.url).href;
const dir = mkdtempSync(join(tmpdir(), "quiver-priority-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// The worker thread: lowers itself as the event writer and the query thread do, says its id.
// TypeScript (.mts: ESM outside a package), loaded through tsx as the server's own are.
const entry = join(dir, "worker.mts");
writeFileSync(
  entry,
  `import { readlinkSync } from "node:fs";
import { parentPort } from "node:worker_threads";
import { yieldToMainThread } from ${JSON.stringify(priority)};
yieldToMainThread();
parentPort.postMessage(Number(readlinkSync("/proc/thread-self").split("/").pop()));
`,
);

const main = join(dir, "main.mjs");
writeFileSync(
  main,
  `
import { readdirSync, readFileSync } from "node:fs";
import { startThread } from ${JSON.stringify(new URL("./db/thread.ts", import.meta.url).href)};
import { lowerHelperThreads, restoreThreadPriorities } from ${JSON.stringify(priority)};
const worker = startThread(new URL(${JSON.stringify(pathToFileURL(entry).href)}), {});
const workerTid = await new Promise((resolve) => worker.once("message", resolve));
const lowered = lowerHelperThreads();
const nice = (tid) => {
  try {
    return Number(readFileSync(\`/proc/self/task/\${tid}/stat\`, "utf8").split(") ")[1].split(" ")[16]);
  } catch {
    return undefined; // a thread that ended meanwhile
  }
};
const niceValues = () =>
  readdirSync("/proc/self/task").map(Number).map((tid) => ({ tid, nice: nice(tid) })).filter((t) => t.nice !== undefined);
const threads = niceValues();
const raised = restoreThreadPriorities();
console.log(JSON.stringify({ pid: process.pid, workerTid, lowered, threads, raised, restored: niceValues() }));
await worker.terminate();
`,
);

interface Seen {
  pid: number;
  workerTid: number;
  lowered: number;
  threads: { tid: number; nice: number }[];
  raised: number;
  restored: { tid: number; nice: number }[];
}

function run(prefix: readonly string[]): Seen {
  const [cmd, ...args] = [...prefix, process.execPath, "--import", "tsx", main];
  return JSON.parse(execFileSync(cmd, args, { encoding: "utf8" }).trim().split("\n").pop()!) as Seen;
}

describe.skipIf(process.platform !== "linux")("thread priority", () => {
  it.each([
    ["0", [], 0],
    ["5", ["nice", "-n", "5"], 5],
  ] as const)(
    "at nice %s: the main thread keeps its priority, our worker runs lower, every other helper lower still",
    (_name, prefix, base) => {
      const seen = run(prefix);
      const niceOf = new Map(seen.threads.map((t) => [t.tid, t.nice]));
      expect(niceOf.get(seen.pid)).toBe(base);
      expect(niceOf.get(seen.workerTid)).toBe(base + WORKER_NICE);
      const helpers = seen.threads.filter((t) => t.tid !== seen.pid && t.tid !== seen.workerTid);
      // Threads come and go in the process (one ended between the lowering and the read in some
      // runs): every helper read after the lowering is below but one started since, and the V8
      // platform's at least were lowered.
      const target = Math.min(19, base + HELPER_NICE);
      expect(helpers.filter((h) => h.nice === target).length).toBeGreaterThanOrEqual(2);
      expect(seen.lowered).toBeGreaterThanOrEqual(2);
      const lowerOrNew = helpers.filter((h) => h.nice !== target);
      expect(lowerOrNew.length).toBeLessThanOrEqual(Math.max(0, helpers.length - seen.lowered));
      // As the server stops, all of them are back at the main thread's priority (as root here).
      if (process.getuid?.() !== 0) return;
      // (A helper may end between the two reads: the count lies between those left and all.)
      const left = seen.restored.filter((t) => t.tid !== seen.pid && niceOf.has(t.tid)).length;
      expect(seen.raised).toBeGreaterThanOrEqual(left);
      expect(seen.raised).toBeLessThanOrEqual(helpers.length + 1);
      expect(seen.restored.map((t) => t.nice)).toEqual(seen.restored.map(() => base));
    },
    30_000,
  );
});
