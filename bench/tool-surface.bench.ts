// The bounded tool surface (issue 29): one scripted task — find a function's usages across five
// files, read them, edit two, run the project's check — replayed through a real Quiver server
// (engine, pipeline, a real runner on a temp workspace, SQLite) against the fake provider
// (Anthropic wire format), twice per round: with single calls (a careful model batching its
// independent calls in parallel: search; five reads; two edits; the check; done) and with
// tool_program + tool_transaction (a program that searches and reads; a transaction that edits
// and runs the check; done). Printed side by side: model round trips, bytes of the requests
// sent (with tokens estimated at 4 bytes each: the fake counts none), and wall time from send
// to turn.finished (p50 over rounds; the fake answers at once, so a real model's time per round
// trip comes on top). Goal: fewer round trips and fewer bytes sent. Without tool_transaction in
// the build (or with BENCH_NO_TRANSACTION=1), the second run uses tool_program and single edits
// and check, and says so.
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import WebSocket from "ws";
import { createTRPCClient, createWSClient, httpBatchLink, splitLink, wsLink } from "@trpc/client";
import { parseEnv } from "../server/env";
import { startQuiver } from "../server/app";
import type { AppRouter } from "../server/api/root";
import type { SessionEvent } from "../server/protocol/events";
import { startFakeProvider, type FakeProvider } from "../server/engine/fake-provider/server";
import type { ScriptStepInput } from "../server/engine/fake-provider/script";
import { builtinTools } from "../server/tools/builtin";
import { goal, percentile, printTable, ratio } from "./lib";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const FILES = ["a", "b", "c", "d", "e"];
const names = new Set(builtinTools().map((t) => t.name));
// BENCH_NO_TRANSACTION=1 measures tool_program alone (single edits and check) even when the transaction is there.
const HAS_TRANSACTION = names.has("tool_transaction") && names.has("run_check") && !process.env.BENCH_NO_TRANSACTION;

// Each usage file is a small real module (~3 KB), so reads carry realistic weight.
const moduleText = (n: string) =>
  [
    `import { parseConfig } from "./config";`,
    "",
    `export const ${n}Config = parseConfig("${n}.json");`,
    "",
    ...Array.from(
      { length: 60 },
      (_, i) => `export function ${n}Helper${i}(x: number): number {\n  return x * ${i + 1} + ${n.charCodeAt(0)};\n}`,
    ),
  ].join("\n") + "\n";
const CHECK = `const { readFileSync } = require("node:fs");
for (const f of ["a", "b"]) {
  if (!readFileSync("src/" + f + ".ts", "utf8").includes('parseConfig("' + f + '.json", { strict: true })')) { console.error(f + ".ts not migrated"); process.exit(1); }
}
console.log("check passed");
`;

function seedWorkspace(dir: string) {
  mkdirSync(join(dir, "src"), { recursive: true });
  writeFileSync(
    join(dir, "src/config.ts"),
    "export function parseConfig(path: string, opts: { strict?: boolean } = {}) {\n  return { path, strict: opts.strict ?? false };\n}\n",
  );
  for (const n of FILES) writeFileSync(join(dir, `src/${n}.ts`), moduleText(n));
  writeFileSync(join(dir, "check.js"), CHECK);
  writeFileSync(
    join(dir, "quiver.checks.json"),
    JSON.stringify({ test: { argv: ["node", "check.js"], timeoutMs: 60_000 } }, null, 2),
  );
}

let id = 0;
const tc = (name: string, args: unknown) => ({
  type: "tool_call" as const,
  id: `toolu_${++id}`,
  name,
  arguments: JSON.stringify(args),
});
const edit = (n: string) => ({
  path: `src/${n}.ts`,
  old_string: `parseConfig("${n}.json")`,
  new_string: `parseConfig("${n}.json", { strict: true })`,
});
const check = names.has("run_check") ? tc("run_check", { name: "test" }) : tc("shell", { command: "node check.js" });
const search = { pattern: "parseConfig(", glob: "src/[a-e].ts" };

function singleScript(): ScriptStepInput[] {
  return [
    { blocks: [{ type: "text", text: "Finding the usages." }, tc("search_text", search)] },
    { blocks: FILES.map((n) => tc("read_file", { path: `src/${n}.ts` })) },
    { blocks: [tc("edit_file", edit("a")), tc("edit_file", edit("b"))] },
    { blocks: [check] },
    { blocks: [{ type: "text", text: "Done: a.ts and b.ts migrated, the check passes." }] },
  ];
}

function programScript(): ScriptStepInput[] {
  const program = tc("tool_program", {
    steps: [
      { op: "search_text", ...search },
      { op: "read_file", repeat: { over: 1, max: 10 } },
    ],
  });
  const changes = HAS_TRANSACTION
    ? [
        {
          blocks: [
            tc("tool_transaction", {
              steps: [
                { op: "edit_file", ...edit("a") },
                { op: "edit_file", ...edit("b") },
                { op: "run_check", name: "test" },
              ],
            }),
          ],
        },
      ]
    : [{ blocks: [tc("edit_file", edit("a")), tc("edit_file", edit("b"))] }, { blocks: [check] }];
  return [
    { blocks: [{ type: "text", text: "Finding and reading the usages." }, program] },
    ...changes,
    { blocks: [{ type: "text", text: "Done: a.ts and b.ts migrated, the check passes." }] },
  ];
}

type Client = ReturnType<typeof createTRPCClient<AppRouter>>;

function untilFinished(client: Client, sessionId: string): Promise<SessionEvent[]> {
  const seen: SessionEvent[] = [];
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => (sub.unsubscribe(), reject(new Error(`timed out; saw ${seen.map((e) => e.type).join(", ")}`))),
      180_000,
    );
    const sub = client.turns.events.subscribe(
      { sessionId, lastSeq: 0 },
      {
        onData: (t) => {
          const ev = (t as { data: SessionEvent }).data;
          seen.push(ev);
          if (ev.type === "turn.finished") {
            clearTimeout(timer);
            sub.unsubscribe();
            resolve(seen);
          }
        },
        onError: (e) => (clearTimeout(timer), reject(e)),
      },
    );
  });
}

interface Run {
  trips: number;
  bytes: number;
  wall: number;
}

async function runTask(
  client: Client,
  fake: FakeProvider,
  workspace: string,
  script: ScriptStepInput[],
  label: string,
  edits = true,
): Promise<Run> {
  seedWorkspace(workspace);
  const session = await client.sessions.create.mutate({ title: label });
  await client.sessions.setMode.mutate({ sessionId: session.id, mode: "auto" });
  const before = fake.requests.length;
  fake.enqueue(...script);
  const done = untilFinished(client, session.id);
  const start = performance.now();
  await client.turns.send.mutate({
    sessionId: session.id,
    text: "Make parseConfig strict in a.ts and b.ts, then run the check.",
  });
  const events = await done;
  const wall = performance.now() - start;
  const failed = events.filter((e) => e.type === "tool.finished" && e.status !== "succeeded");
  if (failed.length) throw new Error(`${label}: a call failed: ${JSON.stringify(failed[0]).slice(0, 600)}`);
  const finished = events.find((e) => e.type === "turn.finished") as Extract<SessionEvent, { type: "turn.finished" }>;
  if (finished.status !== "completed") throw new Error(`${label}: turn ${finished.status}`);
  if (edits && !readFileSync(join(workspace, "src/b.ts"), "utf8").includes('parseConfig("b.json", { strict: true })'))
    throw new Error(`${label}: b.ts was not edited`);
  const mine = fake.requests.slice(before);
  return { trips: mine.length, bytes: mine.reduce((n, r) => n + Buffer.byteLength(r.raw), 0), wall };
}

const fake = await startFakeProvider({ keepRequests: 1000 });
const dataDir = mkdtempSync(join(tmpdir(), "quiver-bench-surface-"));
const env = parseEnv({
  PORT: "0",
  QUIVER_DATA_DIR: dataDir,
  QUIVER_LOG_LEVEL: "warn",
  QUIVER_PROVIDER: "anthropic",
  QUIVER_MODEL: "claude-bench",
  ANTHROPIC_API_KEY: "bench-key",
  ANTHROPIC_BASE_URL: fake.anthropicBaseURL,
});
mkdirSync(env.workspaceDir, { recursive: true });
const quiver = await startQuiver({ env, root: join(import.meta.dirname, ".."), web: false, log: () => {} });
const ws = createWSClient({ url: `${quiver.url.replace("http", "ws")}/api/trpc`, WebSocket: WebSocket as never });
const client: Client = createTRPCClient<AppRouter>({
  links: [
    splitLink({
      condition: (op) => op.type === "subscription",
      true: wsLink({ client: ws }),
      false: httpBatchLink({ url: `${quiver.url}/api/trpc` }),
    }),
  ],
});

try {
  const single: Run[] = [];
  const bounded: Run[] = [];
  // One warm-up of each (first runner ops, first prepared statements), then the measured rounds.
  // The local runner connects and is placed a moment after start: probe with one read until it answers.
  for (let tries = 0; ; tries++) {
    try {
      await runTask(
        client,
        fake,
        env.workspaceDir,
        [{ blocks: [tc("list_files", { depth: 1 })] }, { blocks: [{ type: "text", text: "ok" }] }],
        "probe",
        false,
      );
      break;
    } catch (e) {
      if (tries >= 30 || fake.pending() !== 0) throw e;
      await new Promise((r) => setTimeout(r, 2000));
    }
  }
  await runTask(client, fake, env.workspaceDir, singleScript(), "warm single");
  await runTask(client, fake, env.workspaceDir, programScript(), "warm program");
  for (let r = 0; r < ROUNDS; r++) {
    single.push(await runTask(client, fake, env.workspaceDir, singleScript(), `single ${r}`));
    bounded.push(await runTask(client, fake, env.workspaceDir, programScript(), `program ${r}`));
  }
  const p50 = (xs: number[]) => percentile(Float64Array.from(xs).sort(), 50);
  const s = { trips: single[0].trips, bytes: single[0].bytes, wall: p50(single.map((x) => x.wall)) };
  const b = { trips: bounded[0].trips, bytes: bounded[0].bytes, wall: p50(bounded.map((x) => x.wall)) };
  const second = HAS_TRANSACTION
    ? "tool_program + tool_transaction"
    : `tool_program, single edits and check${names.has("tool_transaction") ? "" : " (tool_transaction not in this build)"}`;
  printTable(
    `find usages in 5 files, read them, edit 2, run the check — real server and runner, fake provider (${ROUNDS} rounds)`,
    [
      "case",
      { title: "round trips", digits: 0 },
      { title: "request bytes", digits: 0 },
      { title: "≈ tokens sent", digits: 0 },
      { title: "wall p50 ms", digits: 0 },
    ],
    [
      ["single calls  [baseline]", s.trips, s.bytes, s.bytes / 4, s.wall],
      [second, b.trips, b.bytes, b.bytes / 4, b.wall],
      [
        "ratio (bounded / single)",
        ratio(b.trips, s.trips),
        ratio(b.bytes, s.bytes),
        ratio(b.bytes, s.bytes),
        ratio(b.wall, s.wall),
      ],
    ],
  );
  goal(
    `${second}: fewer round trips and fewer tokens sent than single calls`,
    b.trips < s.trips && b.bytes < s.bytes,
    `${b.trips} vs ${s.trips} round trips (${ratio(b.trips, s.trips)}), ${b.bytes.toLocaleString("en-US")} vs ${s.bytes.toLocaleString("en-US")} request bytes (${ratio(b.bytes, s.bytes)})`,
  );
} finally {
  ws.close();
  await quiver.stop();
  await fake.close();
  rmSync(dataDir, { recursive: true, force: true });
}
