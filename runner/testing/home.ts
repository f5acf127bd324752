// Test helper: a fake home for a real runner ($HOME a temp folder outside /tmp, as a real home
// is, with the workspace inside it), for the tests of what the sandbox shows of the home
// (runner/exec/host-secrets.ts, home-open.ts, home-redact.ts).
import { mkdir, mkdtemp, realpath, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { spawnRunner, startServer, waitFor } from "../../server/testing/runner";
import type { RunnerPerTest } from "../../server/testing/runner-per-test";

/** Writes `files` (relative path → content) under `dir`; those in a `bin/` folder executable. */
export async function plant(dir: string, files: Record<string, string>): Promise<void> {
  for (const [rel, content] of Object.entries(files)) {
    await mkdir(join(dir, rel, ".."), { recursive: true });
    await writeFile(join(dir, rel), content, { mode: rel.includes("bin/") ? 0o755 : 0o600 });
  }
}

/** A fresh home folder (removed after the test), outside /tmp: the sandbox's private /tmp would hide it. */
export async function fakeHome(t: RunnerPerTest, files: Record<string, string> = {}): Promise<string> {
  const home = await realpath(await mkdtemp("/var/tmp/quiver-home-"));
  t.dirs.push(home);
  await plant(home, files);
  await mkdir(join(home, "project"), { recursive: true });
  return home;
}

/** A server and a sandboxed runner whose $HOME is `home` and workspace `home/project`, connected. */
export async function runnerInHome(t: RunnerPerTest, home: string, env: Record<string, string> = {}): Promise<void> {
  t.server = await startServer();
  t.runner = spawnRunner({
    url: t.server.url,
    workspace: join(home, "project"),
    env: { NODE_ENV: "test", QUIVER_SANDBOX: "auto", HOME: home, ...env },
  });
  await waitFor(() => t.server!.pool.status().some((r) => r.connected), 20_000, "runner to connect");
}
