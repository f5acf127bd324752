// The runner's own PATH (safe-path.ts): a real runner started with a PATH as npm leaves it for a
// runner started in the project it serves (the workspace's node_modules/.bin first) and with
// relative entries, and every program it starts itself planted there by the agent. None may run:
// bwrap and bash run outside the sandbox, setpriv and prlimit apply its limits.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  runShell,
  spawnRunner,
  startServer,
  tempDir,
  waitForRunner,
  type RunnerChild,
  type TestServer,
} from "../server/testing/runner";
import { sandboxInfo } from "./exec/sandbox";
import { lookup, safePath } from "./safe-path";

describe("safePath", () => {
  let base: string;
  beforeAll(async () => {
    base = await tempDir("quiver-safe-path-");
    for (const d of ["ws/node_modules/.bin", "bin", "other"]) mkdirSync(join(base, d), { recursive: true });
    // A folder outside that leads into the workspace, and one inside that leads out.
    symlinkSync(join(base, "ws/node_modules/.bin"), join(base, "into-ws"));
    symlinkSync(join(base, "bin"), join(base, "ws/out"));
  });
  afterAll(() => rmSync(base, { recursive: true, force: true }));

  it("keeps absolute folders outside what is served, as real paths, once", () => {
    const ws = join(base, "ws");
    const path = [
      join(ws, "node_modules/.bin"),
      "",
      ".",
      "node_modules/.bin",
      join(base, "into-ws"),
      join(ws, "out"),
      join(base, "bin"),
      join(base, "bin/../bin"),
      join(base, "missing"),
      join(base, "other"),
    ].join(":");
    expect(safePath(path, [ws])).toBe([join(base, "bin"), join(base, "other")].join(":"));
    // A served folder given relatively, or through a link, is the same folder.
    expect(safePath(path, [undefined, join(base, "ws/../ws")])).toBe(
      [join(base, "bin"), join(base, "other")].join(":"),
    );
    expect(safePath(undefined, [ws])).toBe("");
  });

  it("looks a program up in the kept folders only", () => {
    writeFileSync(join(base, "other/tool"), "#!/bin/sh\n");
    chmodSync(join(base, "other/tool"), 0o755);
    expect(lookup("tool", [join(base, "bin"), join(base, "other")].join(":"))).toBe(join(base, "other/tool"));
    expect(lookup("nothing-here", join(base, "bin"))).toBe("nothing-here");
  });
});

const sandbox = sandboxInfo("auto");
/** What the runner starts itself, found on its PATH. */
const OWN = [
  "bash",
  "sh",
  "bwrap",
  "setpriv",
  "prlimit",
  "unshare",
  "nsenter",
  "slirp4netns",
  "ip",
  "git",
  "tail",
  "env",
];

describe.skipIf(!sandbox.available)("a runner whose PATH holds folders the agent writes", () => {
  let ws: string;
  let server: TestServer;
  let runner: RunnerChild;
  const ran = () => (existsSync(join(ws, ".ran")) ? readFileSync(join(ws, ".ran"), "utf8").trim().split("\n") : []);

  beforeAll(async () => {
    ws = await tempDir();
    // Planted as the agent would in an earlier session: each records that it ran, then runs the
    // real program, so a run that used it would still work and only the record tells.
    for (const dir of [join(ws, "node_modules/.bin"), ws]) {
      mkdirSync(dir, { recursive: true });
      for (const name of OWN) {
        const real = execFileSync("/bin/sh", ["-c", `command -v ${name} || true`], { encoding: "utf8" }).trim();
        if (!real.startsWith("/")) continue;
        writeFileSync(join(dir, name), `#!/bin/sh\necho "${name}" >> ${ws}/.ran\nexec ${real} "$@"\n`);
        chmodSync(join(dir, name), 0o755);
      }
    }
    server = await startServer();
    const path = [join(ws, "node_modules/.bin"), "", ".", process.env.PATH].join(":");
    // Started in the workspace, as `npm start` in the project would: `.` and "" are the workspace.
    runner = spawnRunner({ url: server.url, workspace: ws, env: { ...process.env, PATH: path } });
    await waitForRunner(runner, () => server.pool.status().some((r) => r.connected), 30_000, "runner to connect");
  }, 60_000);
  afterAll(async () => {
    await runner?.stop();
    await server?.close();
    if (ws) rmSync(ws, { recursive: true, force: true });
  });

  it("starts none of them for a command, sandboxed as before", async () => {
    const r = await runShell(server.pool, "echo ok-$((40+2)); cat /proc/self/status | grep -c '^NoNewPrivs:.1'");
    expect(r.output).toContain("ok-42");
    // The sandbox's own setup still applies (no new privileges).
    expect(r.output).toMatch(/^1$/m);
    expect(ran()).toEqual([]);
    // The agent's command sees the same PATH, without the planted folders.
    const path = await runShell(server.pool, 'printf "%s\\n" "$PATH"');
    expect(path.output).not.toContain(ws);
    expect(path.output.split("\n")[0].split(":")).not.toContain(".");
  }, 60_000);
});
