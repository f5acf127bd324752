// Child process of the token-latency benchmark: the server and nothing else. Database, event
// hub, engine and tRPC over WebSocket, assembled as server/app.ts does (a stand-in dispatcher:
// the bench turns call no tools). One long-lived instance per database; each session names its
// provider, so both wire formats go through the same engine. Between `begin` and `end` it
// measures its own CPU, event loop and GC pauses; with BENCH_PROF=<dir> it writes a CPU profile
// of its main thread per case (BENCH_PROF_HEAP=1: an allocation profile instead);
// BENCH_HEAPSNAP=<dir>: a heap snapshot 1.2 s into each ×50 case (mid-turn). `heap` (memory
// and idle benchmarks, node --expose-gc): heap and RSS after a full collection (with
// BENCH_HEAPSNAP, a snapshot too).
//   argv: <database url> <anthropic base url> <openai base url>
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Session } from "node:inspector/promises";
import { monitorEventLoopDelay, performance, PerformanceObserver, type EventLoopUtilization } from "node:perf_hooks";
import { WebSocketServer } from "ws";
import { applyWSSHandler } from "@trpc/server/adapters/ws";
import { openDb } from "../../../server/db";
import { createEventHub, type EventHub } from "../../../server/hub/events";
import { createCluster } from "../../../server/hub/cluster";
import { createSharedHub } from "../../../server/hub/shared";
import { seedSession } from "../../../server/testing/hub";
import { createEngine } from "../../../server/engine/engine";
import { testDispatcher } from "../../../server/testing/engine";
import { createSessionService } from "../../../server/services/sessions";
import type { Actor, Services } from "../../../server/services/types";
import { appRouter } from "../../../server/api/root";
import { lowerHelperThreads } from "../../../server/priority";
import { serve } from "./ipc";
import { stampTokens } from "./stamps";

if (process.send) {
  const [dbUrl, anthropicBaseURL, openaiBaseURL] = process.argv.slice(2);
  // As server/app.ts: the queries on a thread of their own.
  const handle = await openDb(dbUrl, { thread: true });
  const { db } = handle;
  // As server/parts.ts: on PostgreSQL the hub of an instance that may have peers (alone here).
  const cluster = handle.provider === "postgresql" ? createCluster({ url: dbUrl }) : undefined;
  // Stored events read through the query thread's driver, as parts.ts passes them.
  const shared = cluster && createSharedHub(db, cluster, { url: dbUrl, pages: handle.rows });
  const hub: EventHub = shared ?? createEventHub(db, { url: dbUrl, pages: handle.rows });
  // How far a turn has come, for the memory benchmark's samples (one comparison per event).
  let textDeltas = 0;
  const post = hub.post.bind(hub);
  hub.post = (sessionId, body, refused) => {
    if (body.type === "text.delta") textDeltas++;
    post(sessionId, body, refused);
  };
  const engine = createEngine({
    db,
    // As server/parts.ts: the hot reads before each request through plain SQL.
    dbProvider: handle.provider,
    rows: handle.rows,
    hub,
    dispatcher: testDispatcher(),
    systemPrompt: "S",
    env: {
      ANTHROPIC_API_KEY: "k",
      ANTHROPIC_BASE_URL: anthropicBaseURL,
      OPENAI_API_KEY: "k",
      OPENAI_BASE_URL: openaiBaseURL,
    },
  });
  if (cluster && shared) {
    await cluster.start({
      events: (msg) => shared.deliver(msg.events),
      request: async (msg) =>
        msg.type === "publish" ? shared.handlePublish(msg) : { ok: true, value: await engine.cancel(msg.sessionId) },
      approvalAnswered: () => undefined,
      welcome: (to) => shared.welcome(to),
      resync: () => shared.resync(),
    });
  }
  const owner = await seedSession(db);
  const actor: Actor = { userId: owner.userId, orgId: owner.orgId, role: "owner" };
  const services = {
    db,
    dbProvider: handle.provider,
    // As server/app.ts: the first message's title set through plain SQL.
    sessions: createSessionService(db, { dbProvider: handle.provider }),
    engine,
    hub,
  } as unknown as Services;
  const http = createServer();
  // The options server/app.ts gives its tRPC socket server.
  const wss = new WebSocketServer({ server: http, maxPayload: 4 * 1024 * 1024 });
  const trpc = applyWSSHandler({
    wss,
    router: appRouter,
    createContext: () => ({ services, actor }),
    keepAlive: { enabled: true, pingMs: 20_000, pongWaitMs: 10_000 },
  });
  await new Promise<void>((r) => http.listen(0, "127.0.0.1", r));
  // As server/app.ts once it serves (BENCH_KEEP_PRIORITY=1: not, for comparison).
  if (!process.env.BENCH_KEEP_PRIORITY) lowerHelperThreads();

  // BENCH_VERBOSE: when each token reached the server's socket, the SDK's parse and a client's socket.
  const stamps = process.env.BENCH_VERBOSE ? stampTokens(() => window !== undefined) : undefined;

  const profDir = process.env.BENCH_PROF;
  const inspector = profDir ? new Session() : undefined;
  inspector?.connect();
  let window:
    | {
        label: string;
        cpu: NodeJS.CpuUsage;
        elu: EventLoopUtilization;
        delay: ReturnType<typeof monitorEventLoopDelay>;
      }
    | undefined;
  // Garbage-collection pauses of the main thread during a case (ms).
  let gcPauses: number[] = [];
  new PerformanceObserver((list) => {
    if (!window) return;
    for (const e of list.getEntries()) {
      gcPauses.push(e.duration);
      const kind = (e as unknown as { detail?: { kind?: number } }).detail?.kind;
      if (process.env.BENCH_GC_LOG && e.duration > 2)
        console.error(`[gc] ${window.label} ${e.duration.toFixed(1)} ms kind ${kind}`);
    }
  }).observe({ entryTypes: ["gc"] });

  // CPU ticks of each of this process's threads (Linux), by thread name.
  const threadTicks = () => {
    const out = new Map<string, number>();
    try {
      for (const tid of readdirSync("/proc/self/task")) {
        const stat = readFileSync(`/proc/self/task/${tid}/stat`, "utf8");
        const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
        const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
        // With its nice value: the helpers run below the main thread (server/priority.ts).
        const key = tid === String(process.pid) ? "main" : `${name}#${tid} (nice ${f[16]})`;
        out.set(key, (out.get(key) ?? 0) + Number(f[11]) + Number(f[12]));
      }
    } catch {
      /* not Linux */
    }
    return out;
  };
  let ticksAtBegin = new Map<string, number>();
  // The main thread's time runnable but waiting for a CPU (Linux schedstat, ns): how much of
  // the latency is the machine's other work, not this thread's.
  const mainWaitNs = () => {
    try {
      return Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, "utf8").split(" ")[1]);
    } catch {
      return 0;
    }
  };
  let waitAtBegin = 0;
  // The main thread's context switches (Linux): involuntary ones are preemptions, by another
  // process or thread that the scheduler let run first.
  const mainSwitches = () => {
    try {
      const status = readFileSync(`/proc/self/task/${process.pid}/status`, "utf8");
      const field = (name: string) => Number(status.match(new RegExp(`^${name}:\\s+(\\d+)`, "m"))?.[1] ?? 0);
      return { voluntary: field("voluntary_ctxt_switches"), involuntary: field("nonvoluntary_ctxt_switches") };
    } catch {
      return { voluntary: 0, involuntary: 0 };
    }
  };
  let switchesAtBegin = mainSwitches();

  serve(
    async (req) => {
      switch (req.type) {
        case "seed": {
          const ids: string[] = [];
          for (let i = 0; i < req.sessions; i++) {
            const s = await db.session.create({
              data: { title: "bench", ownerId: actor.userId, orgId: actor.orgId, workspace: "", provider: req.kind },
            });
            ids.push(s.id);
          }
          return { type: "seeded", sessionIds: ids };
        }
        case "begin": {
          if (inspector && process.env.BENCH_PROF_HEAP)
            await inspector.post("HeapProfiler.startSampling", {
              samplingInterval: 4096,
              includeObjectsCollectedByMajorGC: true,
              includeObjectsCollectedByMinorGC: true,
            });
          else if (inspector) {
            await inspector.post("Profiler.enable");
            await inspector.post("Profiler.setSamplingInterval", { interval: 200 });
            await inspector.post("Profiler.start");
          }
          const delay = monitorEventLoopDelay({ resolution: 1 });
          delay.enable();
          gcPauses = [];
          ticksAtBegin = threadTicks();
          waitAtBegin = mainWaitNs();
          switchesAtBegin = mainSwitches();
          window = { label: req.label, cpu: process.cpuUsage(), elu: performance.eventLoopUtilization(), delay };
          if (process.env.BENCH_HEAPSNAP && req.label.includes("×50")) {
            const label = req.label;
            setTimeout(async () => {
              const { writeHeapSnapshot } = await import("node:v8");
              console.error(
                "snapshot",
                writeHeapSnapshot(join(process.env.BENCH_HEAPSNAP!, `${label.replace(/\W+/g, "-")}.heapsnapshot`)),
              );
            }, 1200);
          }
          return { type: "begun" };
        }
        case "end": {
          if (!window) throw new Error("end without begin");
          const cpu = process.cpuUsage(window.cpu);
          const elu = performance.eventLoopUtilization(window.elu);
          window.delay.disable();
          const out = {
            type: "ended" as const,
            cpuMs: (cpu.user + cpu.system) / 1000,
            elu: elu.utilization,
            loopMs: elu.active,
            delayP99Ms: window.delay.percentile(99) / 1e6,
            delayMaxMs: window.delay.max / 1e6,
            gcMs: gcPauses.reduce((a, b) => a + b, 0),
            gcMaxMs: Math.max(0, ...gcPauses),
            gcCount: gcPauses.length,
            mainWaitMs: (mainWaitNs() - waitAtBegin) / 1e6,
            mainSwitches: ((now) => ({
              voluntary: now.voluntary - switchesAtBegin.voluntary,
              involuntary: now.involuntary - switchesAtBegin.involuntary,
            }))(mainSwitches()),
            ...stamps?.take(),
            threads: [...threadTicks()]
              .map(([k, v]) => [k, (v - (ticksAtBegin.get(k) ?? 0)) * 10] as [string, number])
              .filter(([, ms]) => ms > 0),
          };
          if (inspector && profDir && process.env.BENCH_PROF_HEAP) {
            const { profile } = await inspector.post("HeapProfiler.stopSampling");
            writeFileSync(join(profDir, `${window.label.replace(/\W+/g, "-")}.heapprofile`), JSON.stringify(profile));
          } else if (inspector && profDir) {
            const { profile } = await inspector.post("Profiler.stop");
            writeFileSync(join(profDir, `${window.label.replace(/\W+/g, "-")}.cpuprofile`), JSON.stringify(profile));
          }
          window = undefined;
          return out;
        }
        case "heap": {
          const gc = (globalThis as { gc?: () => void }).gc;
          if (!gc) throw new Error("heap: start the server with --expose-gc");
          gc();
          const { heapUsed, rss } = process.memoryUsage();
          if (process.env.BENCH_HEAPSNAP) {
            const { writeHeapSnapshot } = await import("node:v8");
            console.error(
              "snapshot",
              writeHeapSnapshot(join(process.env.BENCH_HEAPSNAP, `heap-${textDeltas}.heapsnapshot`)),
            );
          }
          return { type: "heap", heapUsed, rss, textDeltas };
        }
        case "close":
          for (const c of wss.clients) c.terminate();
          trpc.broadcastReconnectNotification();
          wss.close();
          await new Promise((r) => http.close(r));
          await engine.dispose();
          await hub.dispose();
          await cluster?.dispose();
          await handle.close();
          inspector?.disconnect();
          return { type: "closed" };
        default:
          throw new Error(`server: no ${req.type}`);
      }
    },
    async () => ({ type: "ready", url: `ws://127.0.0.1:${(http.address() as AddressInfo).port}` }),
  );
}
