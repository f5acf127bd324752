// The login environment, captured once: `bash -lc` runs the login profile (/etc/profile,
// ~/.profile…) and prints the environment it ends with; commands then run as plain `bash -c`
// with that environment, so the profile's cost is paid once per launcher instead of per
// command. Exported variables and functions carry over; aliases and unexported shell
// functions of the profile do not (they never reached `bash -c` children anyway).
import { scrubEnv } from "./env";
import type { Launched, OutputSink } from "./launch";
import { MARKER_VAR } from "./kill";

const SENTINEL = "QUIVER_LOGIN_ENV";
/** Prints a sentinel first, so whatever the profile itself prints is skipped. */
export const LOGIN_ENV_ARGV = ["bash", "-lc", `printf '\\0%s\\0' ${SENTINEL}; exec env -0`];
const LOGIN_TIMEOUT_MS = 30_000;
const MAX_ENV_BYTES = 4 * 1024 * 1024;
// Bookkeeping of the capturing shell, not environment to hand on.
const SHELL_STATE = new Set(["_", "PWD", "OLDPWD", "SHLVL", MARKER_VAR]);

/**
 * The environment in `env -0` output after the sentinel. What the runner handed in was scrubbed
 * already; whatever the profile added or changed is scrubbed here by the same rules.
 */
export function parseLoginEnv(
  stdout: Buffer,
  base: Record<string, string>,
  allow: readonly string[],
): Record<string, string> | undefined {
  const text = stdout.toString("utf8");
  const at = text.lastIndexOf(`\0${SENTINEL}\0`);
  if (at < 0) return undefined;
  const kept: Record<string, string> = {};
  const added: Record<string, string> = {};
  for (const entry of text.slice(at + SENTINEL.length + 2).split("\0")) {
    const eq = entry.indexOf("=");
    if (eq <= 0) continue;
    const name = entry.slice(0, eq);
    const value = entry.slice(eq + 1);
    if (SHELL_STATE.has(name)) continue;
    if (base[name] === value) kept[name] = value;
    else added[name] = value;
  }
  return { ...kept, ...scrubEnv(added as NodeJS.ProcessEnv, { allow }) };
}

/** Runs the login profile through `start` and returns its environment, or `base` if that fails. */
export async function captureLoginEnv(
  start: (argv: string[], sink: OutputSink) => Promise<Launched>,
  base: Record<string, string>,
  allow: readonly string[],
  log: (line: string) => void,
): Promise<Record<string, string>> {
  const out: Buffer[] = [];
  let size = 0;
  const proc = await start(LOGIN_ENV_ARGV, (fd, chunk) => {
    if (fd !== 1 || size > MAX_ENV_BYTES) return;
    out.push(chunk);
    size += chunk.length;
  });
  const timer = setTimeout(() => void proc.kill(), LOGIN_TIMEOUT_MS);
  const exit = await proc.exited;
  clearTimeout(timer);
  const env = exit.code === 0 ? parseLoginEnv(Buffer.concat(out), base, allow) : undefined;
  if (env) return env;
  const why = exit.error ?? (exit.signal ? `killed by ${exit.signal}` : `exit ${exit.code}`);
  log(`the login profile could not be captured (${why}); commands start from the runner's environment`);
  return base;
}
