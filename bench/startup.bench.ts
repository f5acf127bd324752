// Start-up (issue 31, goal 3): a restart of an already built server, from spawn to the first
// 200 from /api/health, against a bare `next start` of the same app (spawn to its first HTTP
// answer) measured alternately in the same run. The server runs as `npm start` does
// (server/start.mjs: the ahead-of-time build), on its own port, restarting on the data folder
// its first (untimed) start made, and spawns its local runner. The
// old way, the sources under tsx, is timed too as a reference. Goal: the warm start ≤ 2× next start.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { goal, median, printTable, ratio } from "./lib";
import { freePort } from "../server/testing/ports";

const root = fileURLToPath(new URL("..", import.meta.url));
const ROUNDS = Number(process.env.BENCH_START_ROUNDS ?? 5);
const TSX_ROUNDS = Number(process.env.BENCH_START_TSX_ROUNDS ?? 2);

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  // its own process group: the server's runner (and Next's workers) go with it
  const kill = (sig: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, sig);
    } catch {
      // gone
    }
  };
  kill("SIGTERM");
  const timer = setTimeout(() => kill("SIGKILL"), 10_000);
  return exited.finally(() => clearTimeout(timer));
}

/** Spawns `args`, polls `url` until `ok(status)`; returns the milliseconds from spawn. */
async function timeToAnswer(
  args: string[],
  env: NodeJS.ProcessEnv,
  url: string,
  ok: (status: number) => boolean,
  what: string,
  limitMs = 180_000,
): Promise<{ ms: number; output: string }> {
  let output = "";
  const start = performance.now();
  const child = spawn(process.execPath, args, { cwd: root, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
  child.stdout!.on("data", (d) => (output += d));
  child.stderr!.on("data", (d) => (output += d));
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${what} exited (${child.exitCode}) before answering:\n${output}`);
      if (performance.now() - start > limitMs)
        throw new Error(`${what} did not answer in ${limitMs / 1000} s:\n${output}`);
      const status = await fetch(url, { signal: AbortSignal.timeout(5_000) }).then(
        (r) => r.status,
        () => 0,
      );
      if (ok(status)) return { ms: performance.now() - start, output };
      await new Promise((r) => setTimeout(r, 20));
    }
  } finally {
    await stop(child);
  }
}

const baseEnv: NodeJS.ProcessEnv = { ...process.env, NEXT_TELEMETRY_DISABLED: "1", NODE_ENV: "production" };
delete baseEnv.DATABASE_URL; // the default: SQLite in the data folder

// Other work in the same checkout may change a source between rounds: a start that had to
// build (the web app or the compiled server) is not a warm start, and that round is run again.
const REBUILT = /building the web app|compiling the server/;

async function quiver(args: string[], what: string, build = false): Promise<number> {
  for (let attempt = 0; ; attempt++) {
    // a build of the web app takes minutes on a busy machine
    const { ms, output } = await quiverOnce(args, what, 30 * 60_000);
    if (build || !REBUILT.test(output)) return ms;
    if (attempt >= 3) throw new Error(`${what}: the sources kept changing, every start rebuilt`);
    console.log(`(${what} rebuilt: changed sources; round run again)`);
  }
}

// A restart: every start of a kind finds the data folder its first start made (database migrated).
const dataDirs = new Map<string, string>();

async function quiverOnce(args: string[], what: string, limitMs: number) {
  const key = args.join(" ");
  if (!dataDirs.has(key)) dataDirs.set(key, await mkdtemp(join(tmpdir(), "quiver-bench-start-")));
  const port = await freePort();
  return timeToAnswer(
    args,
    { ...baseEnv, PORT: String(port), QUIVER_DATA_DIR: dataDirs.get(key)! },
    `http://127.0.0.1:${port}/api/health`,
    (s) => s === 200,
    what,
    limitMs,
  );
}

async function nextStart(): Promise<number> {
  const port = await freePort();
  const next = join(root, "node_modules", "next", "dist", "bin", "next");
  return (
    await timeToAnswer(
      [next, "start", "-p", String(port), "-H", "127.0.0.1"],
      baseEnv,
      `http://127.0.0.1:${port}/`,
      (s) => s > 0,
      "next start",
    )
  ).ms;
}

const compiled = [join(root, "server", "start.mjs")];
const tsx = ["--import", "tsx", join(root, "server", "main.ts")];

// The first start builds whatever is stale (the web app, the compiled server) and is not timed.
console.log("building (when stale) and warming the page cache…");
await quiver(compiled, "npm start (build)", true);
await quiver(tsx, "tsx server/main.ts (first start)", true);
await nextStart();

const ours: number[] = [];
const bare: number[] = [];
const old: number[] = [];
for (let r = 0; r < ROUNDS; r++) {
  bare.push(await nextStart());
  ours.push(await quiver(compiled, "npm start"));
  if (r < TSX_ROUNDS) old.push(await quiver(tsx, "tsx server/main.ts"));
}
printTable(
  `Warm start to answering (${ROUNDS} rounds alternating, p50; the tsx start ${TSX_ROUNDS} rounds)`,
  [
    "start",
    { title: "p50 ms", digits: 0 },
    { title: "min ms", digits: 0 },
    { title: "max ms", digits: 0 },
    "vs next start",
  ],
  [
    ["bare next start, first HTTP answer  [baseline]", median(bare), Math.min(...bare), Math.max(...bare), "1.00x"],
    [
      "npm start (compiled), /api/health 200",
      median(ours),
      Math.min(...ours),
      Math.max(...ours),
      ratio(median(ours), median(bare)),
    ],
    ...(old.length
      ? [
          [
            "tsx server/main.ts (before), /api/health 200",
            median(old),
            Math.min(...old),
            Math.max(...old),
            ratio(median(old), median(bare)),
          ],
        ]
      : []),
  ],
);
for (const dir of dataDirs.values()) await rm(dir, { recursive: true, force: true });
goal(
  "#31.3 warm start to healthy ≤ 2× a bare next start (p50)",
  median(ours) <= 2 * median(bare),
  `${ratio(median(ours), median(bare))} (${median(ours).toFixed(0)} ms against ${median(bare).toFixed(0)} ms)`,
);
