// Test fixture (tests only): a real workspace whose `dir` a real background process keeps
// swapping between a folder inside and a symbolic link to a folder outside that holds a secret,
// the attack a command in the workspace can run against every file operation of the runner.
import { spawn, type ChildProcess } from "node:child_process";
import { lstat, mkdir, mkdtemp, readdir, readFile, realpath, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const SECRET = "TOP-SECRET-cookie-0123456789abcdef";
/** Only the outside folder has this file: seeing its name in a listing means the race won. */
export const OUTSIDE_ONLY = "outside-only.txt";
/** Files both folders hold, so an operation by name finds something on either side. */
export const SHARED = ["secret.txt", "a.txt", "victim.txt"];

// Renames only (each atomic), in one order, so `dir` is never lost: absent → folder → absent →
// link → absent. Every 64 rounds it puts back what the operations under attack removed or made,
// and ends if the test process is gone.
const SWAPPER = `
const fs = require("fs");
const [ws, out, parent] = process.argv.slice(1);
const real = ws + "/.real", lnk = ws + "/.lnk", dir = ws + "/dir";
const heal = () => {
  try { fs.rmSync(dir, { recursive: true, force: true }); } catch {}
  try { fs.mkdirSync(real); } catch {}
  for (const f of ${JSON.stringify(SHARED)}) { try { fs.writeFileSync(real + "/" + f, "inside\\n", { flag: "wx" }); } catch {} }
  try { fs.symlinkSync(out, lnk); } catch {}
};
for (let i = 0; ; i++) {
  if (i % 64 === 0) heal();
  // The test process killed (a timeout, kill -9): the swapping ends with it.
  if (i % 64 === 0 && String(process.ppid) !== parent) process.exit(0);
  try { fs.renameSync(real, dir); } catch {}
  try { fs.renameSync(dir, real); } catch {}
  try { fs.renameSync(lnk, dir); } catch {}
  try { fs.renameSync(dir, lnk); } catch {}
}`;

export interface RaceFixture {
  base: string;
  ws: string;
  outside: string;
  /** Starts the swapping process (a real one, not a timer in this process). */
  startSwapping(): Promise<ChildProcess>;
  /** Every file under the outside folder with its bytes and mtime: must never change. */
  snapshot(): Promise<string>;
  cleanup(): Promise<void>;
}

export async function raceFixture(): Promise<RaceFixture> {
  const base = await realpath(await mkdtemp(join(tmpdir(), "quiver-race-")));
  const ws = join(base, "ws");
  const outside = join(base, "outside");
  await mkdir(ws);
  await mkdir(outside);
  for (const f of SHARED) await writeFile(join(outside, f), `${SECRET}\n${f}\n`);
  await writeFile(join(outside, OUTSIDE_ONLY), `${SECRET}\n`);
  await mkdir(join(outside, "keep"));
  let child: ChildProcess | undefined;
  return {
    base,
    ws,
    outside,
    async startSwapping() {
      child = spawn(process.execPath, ["-e", SWAPPER, ws, outside, String(process.pid)], { stdio: "ignore" });
      // Started for real: `dir` has been seen as a link and as a folder.
      const seen = new Set<string>();
      for (const until = Date.now() + 15_000; seen.size < 2 && Date.now() < until;) {
        const st = await lstat(join(ws, "dir")).catch(() => null);
        if (st) seen.add(st.isSymbolicLink() ? "link" : "dir");
        else await new Promise((r) => setTimeout(r, 1));
      }
      if (seen.size < 2) throw new Error("the swapping process did not start");
      return child;
    },
    async snapshot() {
      const rows: string[] = [];
      const walk = async (d: string): Promise<void> => {
        for (const name of (await readdir(d)).sort()) {
          const p = join(d, name);
          const st = await stat(p);
          if (st.isDirectory()) {
            rows.push(`${p}/`);
            await walk(p);
          } else rows.push(`${p} ${st.mtimeMs} ${(await readFile(p)).toString("base64")}`);
        }
      };
      await walk(outside);
      return rows.join("\n");
    },
    async cleanup() {
      if (child && child.exitCode === null && child.signalCode === null) {
        const gone = new Promise((r) => child!.once("exit", r));
        child.kill("SIGKILL");
        await gone;
      }
      await rm(base, { recursive: true, force: true });
    },
  };
}

/** Runs `attempt` until `tries` times or `ms` have passed; returns how many ran. */
export async function hammer(
  tries: number,
  ms: number,
  attempt: (i: number) => Promise<void>,
  parallel = 1,
): Promise<number> {
  const until = Date.now() + ms;
  let next = 0;
  const lane = async () => {
    while (next < tries && Date.now() < until) await attempt(next++);
  };
  await Promise.all(Array.from({ length: parallel }, lane));
  return next;
}
