// `npm start`: runs the server compiled ahead of time (server/build/compile.mjs) instead of
// compiling its TypeScript with tsx at every start, which made a restart take 7–13 s to answer
// /api/health. Plain JavaScript on purpose: this file is what runs before anything is compiled.
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { compiledServer } from "./build/compile.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const dir = await compiledServer(join(root, ".quiver", "build"), (line) => console.log(`[quiver] ${line}`));
process.setSourceMapsEnabled(true);
await import(pathToFileURL(join(dir, "server-main.mjs")).href);
