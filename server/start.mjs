// `npm start`: runs the server compiled ahead of time (server/build/compile.mjs) instead of
// compiling its TypeScript with tsx at every start, which made a restart take 7–13 s to answer
// /api/health. Plain JavaScript on purpose: this file is what runs before anything is compiled.
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { compiledServer } from "./build/compile.mjs";
import { lowerOtherThreads, startEarlyThread } from "./build/early.mjs";
import { mapStackTraces } from "./build/stack-maps.mjs";

// Held until the server holds it itself (loop-hold.ts says why): loading the bundle awaits
// WebAssembly compiles, which are no event of the loop, and with nothing pending Node first
// waited for every thread's background work (the query thread's Prisma compile included).
const hold = setInterval(() => undefined, 1 << 30);
lowerOtherThreads(19); // V8's helpers (build/early.mjs)
const root = fileURLToPath(new URL("..", import.meta.url));
const dir = await compiledServer(join(root, ".quiver", "build"), (line) => console.log(`[quiver] ${line}`));
// The query thread starts now, beside the loading of the server's modules, on the database the
// server will open: the URL is worked out as server/env.ts and db/index.ts do, and the server
// adopts the thread only if it asks for the same one (build/early.mjs). Not on a first start
// (no database file yet): the thread would create it before the migrations.
const dbUrl = process.env.DATABASE_URL ?? `file:${resolve(process.env.QUIVER_DATA_DIR ?? ".quiver", "quiver.db")}`;
if (/^postgres(ql)?:/.test(dbUrl) || (dbUrl.startsWith("file:") && existsSync(resolve(dbUrl.slice(5))))) {
  startEarlyThread({ url: dbUrl, entry: pathToFileURL(join(dir, "server-db-query-thread-worker.mjs")).href });
}
// Traces point into the TypeScript sources, the bundle's map read when first needed (not Node's
// source maps, which parse every module's map as it loads: build/stack-maps.mjs).
mapStackTraces(dir);
// The server's main() has taken its own hold by the time its module has run (app.ts).
await import(pathToFileURL(join(dir, "server-main.mjs")).href);
clearInterval(hold);
