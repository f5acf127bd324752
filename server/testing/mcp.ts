// TEST FIXTURE: starts mcp-server.ts as real processes: the config entry of a stdio child
// (node + tsx, as a user's config would name any command) and a Streamable HTTP server child on
// a real port, which a test can stop and start again on the same port. Never used by the product.
import { spawn, type ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";

export const SERVER_SCRIPT = fileURLToPath(new URL("./mcp-server.ts", import.meta.url));
// tsx as a loader in one node process: its CLI would put a second process under ours, which a
// kill of ours would leave running.
const TSX = ["--import", pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href];

/** A stdio entry of `mcpServers` that runs the test server. */
export function stdioEntry(extra: Record<string, unknown> = {}) {
  return { command: process.execPath, args: [...TSX, SERVER_SCRIPT], ...extra };
}

export interface HttpServerChild {
  port: number;
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** The test server over Streamable HTTP; port 0 picks a free one. Resolves once it listens. */
export function startHttpServer(port = 0): Promise<HttpServerChild> {
  const child = spawn(process.execPath, [...TSX, SERVER_SCRIPT, "--http", String(port)], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr!.on("data", (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await exited;
  };
  return new Promise((resolve, reject) => {
    let out = "";
    const timer = setTimeout(
      () => void stop().then(() => reject(new Error(`test MCP server did not listen: ${stderr}`))),
      20_000,
    );
    child.stdout!.on("data", (c: Buffer) => {
      out += c.toString();
      const m = /listening (\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        const p = Number(m[1]);
        resolve({ port: p, url: `http://127.0.0.1:${p}/mcp`, child, stop });
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`test MCP server exited (${code}): ${stderr}`));
    });
  });
}

/** Pids of this process's children whose command line contains `text` (Linux /proc). */
export function childrenRunning(text: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid === process.pid && readFileSync(`/proc/${name}/cmdline`, "utf8").replace(/\0/g, " ").includes(text))
        pids.push(Number(name));
    } catch {
      /* gone meanwhile */
    }
  }
  return pids;
}
