// A runner killed -9 runs no exit handler and leaves its folder of redacted home copies
// (home-redact.ts) in the temp folder; the next runner removes it at start, and only such: not a
// live runner's, nor one whose owner's pid now belongs to another process, nor another PID
// namespace's or another user's.
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { chown, mkdir, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { spawnRunner, waitFor } from "../../server/testing/runner";
import { useRunnerPerTest } from "../../server/testing/runner-per-test";
import { fakeHome, runnerInHome } from "../testing/home";
import { sandboxInfo } from "./sandbox";

const bwrap = sandboxInfo("auto").available;

const t = useRunnerPerTest();

const PREFIX = "quiver-home-copies-";
const copiesOf = (pid: number) => readdirSync(tmpdir()).filter((n) => n.startsWith(`${PREFIX}${pid}-`));
const filled = (pid: number) => copiesOf(pid).length === 1 && readdirSync(join(tmpdir(), copiesOf(pid)[0])).length > 0;

describe.runIf(bwrap)("the copies' folders of runners killed -9", () => {
  it("are removed by the next runner's start; a live runner's and ones it cannot judge stay", async () => {
    const home = await fakeHome(t, { ".bashrc": "export GH_TOKEN=FAKE-STALE-1\n" });
    await runnerInHome(t, home);
    const live = t.runner!;
    const livePid = live.child.pid!;
    expect(copiesOf(livePid)).toHaveLength(1);

    // A second runner on the same home, killed -9 once its copies exist.
    const doomed = spawnRunner({
      url: t.server!.url,
      workspace: join(home, "project"),
      env: { NODE_ENV: "test", QUIVER_SANDBOX: "auto", HOME: home },
    });
    await waitFor(() => filled(doomed.child.pid!), 20_000, "the killed runner's copies");
    const [stale] = copiesOf(doomed.child.pid!);
    doomed.child.kill("SIGKILL");
    await doomed.exited;
    expect(readdirSync(tmpdir())).toContain(stale);
    expect(readdirSync(join(tmpdir(), stale)).length).toBeGreaterThan(0);

    // A live pid (this test's) with another start time: a reused pid, so its owner is gone. Another
    // PID namespace's folder and another user's cannot be judged from here and stay.
    const boot = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").replace(/[^0-9a-f]/g, "");
    const ns = /\d+/.exec(readlinkSync("/proc/self/ns/pid"))![0];
    const reused = `${PREFIX}${process.pid}-1-${boot}-${ns}-reused`;
    const otherNs = `${PREFIX}999999-1-${boot}-1-otherns`;
    const otherUser = `${PREFIX}999998-1-${boot}-${ns}-otheruser`;
    for (const n of [reused, otherNs, otherUser]) {
      await mkdir(join(tmpdir(), n));
      await writeFile(join(tmpdir(), n, "copy"), "x");
      t.dirs.push(join(tmpdir(), n));
    }
    const mine = process.getuid?.() === 0;
    if (mine) await chown(join(tmpdir(), otherUser), 65534, 65534);

    // The next runner's start sweeps.
    await t.runner!.stop();
    await runnerInHome(t, home);
    const after = readdirSync(tmpdir());
    expect(after).not.toContain(stale);
    expect(after).not.toContain(reused);
    expect(after).toContain(otherNs);
    if (mine) expect(after).toContain(otherUser);
    expect(copiesOf(t.runner!.child.pid!)).toHaveLength(1);
    expect(live.child.exitCode).not.toBeNull(); // stopped above: its exit handler removed its own
    expect(copiesOf(livePid)).toHaveLength(0);
  }, 90_000);

  it("a live runner's folder is kept by another runner's start", async () => {
    const home = await fakeHome(t, { ".bashrc": "export GH_TOKEN=FAKE-STALE-2\n" });
    await runnerInHome(t, home);
    const other = spawnRunner({
      url: t.server!.url,
      workspace: join(home, "project"),
      env: { NODE_ENV: "test", QUIVER_SANDBOX: "auto", HOME: home },
    });
    try {
      await waitFor(() => copiesOf(other.child.pid!).length === 1, 20_000, "the second runner's copies");
      expect(copiesOf(t.runner!.child.pid!)).toHaveLength(1);
    } finally {
      await other.stop();
    }
  }, 60_000);
});
