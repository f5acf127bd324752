// A deleted session's checkpoints on real folders with real git: its ref goes, what only it
// reached is pruned (once past the grace period), another session's checkpoints stay whole.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Workspace } from "../workspace/workspace";
import type { OpContext } from "../ops";
import { checkpointOps, shadowOf } from "./ops";
import { dropSessionRef, pruneShadow } from "./forget";

describe("forgetting a deleted session's checkpoints", () => {
  let base: string;
  let dir: string;
  let ws: Workspace;
  const ctxOf = (sessionId: string): OpContext => ({
    sessionId,
    workspace: ws,
    signal: new AbortController().signal,
    deadline: Date.now() + 60_000,
    progress() {},
    filesChanged() {},
  });
  const run = async (sessionId: string, op: string, input: unknown) => {
    const o = checkpointOps[op];
    return o.run(o.input.parse(input), ctxOf(sessionId));
  };
  const shadowGit = (...args: string[]) =>
    execFileSync("git", [`--git-dir=${shadowOf(ws).dir}`, ...args], { encoding: "utf8" });
  const has = (object: string) => {
    try {
      shadowGit("cat-file", "-e", object);
      return true;
    } catch {
      return false;
    }
  };
  const blobOf = (text: string) =>
    execFileSync("git", ["hash-object", "--stdin"], { input: text, encoding: "utf8" }).trim();
  const refs = () => shadowGit("for-each-ref", "--format=%(refname)", "refs/quiver/").split("\n").filter(Boolean);

  beforeAll(async () => {
    base = mkdtempSync(join(tmpdir(), "quiver-cp-forget-"));
    process.env.QUIVER_CHECKPOINT_DIR = join(base, "shadows");
    dir = join(base, "ws");
    mkdirSync(dir);
    writeFileSync(join(dir, "shared.txt"), "both sessions see this\n");
    ws = await Workspace.open(dir, { watch: false });
  });

  afterAll(() => {
    ws?.dispose();
    rmSync(base, { recursive: true, force: true });
    delete process.env.QUIVER_CHECKPOINT_DIR;
  });

  it("drops the ref, prunes what only it reached, and leaves the other session's checkpoints whole", async () => {
    writeFileSync(join(dir, "only-a.txt"), "secret of session a\n");
    const a = await run("a", "checkpoint.create", {});
    expect(a.ok).toBe(true);
    unlinkSync(join(dir, "only-a.txt"));
    writeFileSync(join(dir, "b.txt"), "session b's file\n");
    const b = await run("b", "checkpoint.create", {});
    const bCommit = (b.meta as { commit: string }).commit;
    expect(refs()).toHaveLength(2);
    expect(has(blobOf("secret of session a\n"))).toBe(true);

    // Past the grace period ("now"), as the next prune after it would find them.
    expect(await dropSessionRef(shadowOf(ws), `s-${sha("a")}`)).toBe(true);
    await pruneShadow(shadowOf(ws), "now");

    expect(refs()).toHaveLength(1);
    expect(has(blobOf("secret of session a\n"))).toBe(false);
    expect(has((a.meta as { commit: string }).commit)).toBe(false);
    expect(has(bCommit)).toBe(true);
    expect(has(blobOf("both sessions see this\n"))).toBe(true);
    const diff = await run("b", "checkpoint.diff", { from: bCommit });
    expect(diff.ok).toBe(true);
  });

  it("through the op: the ref goes at once, objects younger than the grace period stay for a later prune", async () => {
    writeFileSync(join(dir, "only-c.txt"), "session c's fresh file\n");
    const c = await run("c", "checkpoint.create", {});
    unlinkSync(join(dir, "only-c.txt"));
    await run("b", "checkpoint.create", {});
    const forgot = await run("c", "checkpoint.forget_session", {});
    expect(forgot).toMatchObject({ ok: true, output: "the session's checkpoints were removed" });
    expect(refs()).toHaveLength(1);
    // Younger than 10 minutes: kept, as an overlapping runner's snapshot in progress would be.
    expect(has((c.meta as { commit: string }).commit)).toBe(true);
    await pruneShadow(shadowOf(ws), "now");
    expect(has((c.meta as { commit: string }).commit)).toBe(false);
  });

  it("prunes what only the session reached after it was packed", async () => {
    writeFileSync(join(dir, "only-d.txt"), "session d's packed file\n");
    const d = await run("d", "checkpoint.create", {});
    unlinkSync(join(dir, "only-d.txt"));
    await run("b", "checkpoint.create", {});
    shadowGit("repack", "-d", "-q"); // as pack.ts does past git's threshold
    const loose = (object: string) =>
      existsSync(join(shadowOf(ws).dir, "objects", object.slice(0, 2), object.slice(2)));
    expect(loose(blobOf("session d's packed file\n"))).toBe(false);
    expect(has(blobOf("session d's packed file\n"))).toBe(true);
    expect(await dropSessionRef(shadowOf(ws), `s-${sha("d")}`)).toBe(true);
    await pruneShadow(shadowOf(ws), "now");
    expect(has(blobOf("session d's packed file\n"))).toBe(false);
    expect(has((d.meta as { commit: string }).commit)).toBe(false);
    expect(has(blobOf("both sessions see this\n"))).toBe(true);
    expect((await run("b", "checkpoint.diff", { from: (d.meta as { commit: string }).commit })).ok).toBe(false);
  });

  it("a session with no checkpoints, or forgotten twice, is answered plainly", async () => {
    expect(await run("never", "checkpoint.forget_session", {})).toMatchObject({
      ok: true,
      output: "the session had no checkpoints on this runner",
    });
    expect(await run("c", "checkpoint.forget_session", {})).toMatchObject({ ok: true });
    expect(checkpointOps["checkpoint.forget_session"].input.safeParse({ extra: 1 }).success).toBe(false);
  });

  it("prunes asked for while one runs are folded into one more run, not one each", async () => {
    const shadow = shadowOf(ws);
    const calls: string[][] = [];
    const real = shadow.ok.bind(shadow);
    shadow.ok = (args, opts) => (calls.push(args), real(args, opts));
    try {
      await Promise.all([pruneShadow(shadow, "now"), pruneShadow(shadow, "now"), pruneShadow(shadow, "now")]);
    } finally {
      shadow.ok = real;
    }
    expect(calls.filter((c) => c[0] === "prune")).toHaveLength(2);
  });
});

function sha(text: string): string {
  return execFileSync("sha256sum", { input: text, encoding: "utf8" }).slice(0, 24);
}
