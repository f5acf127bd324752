// Two servers binding look-alike runner ids for two keys at the same moment (key-claim-child.ts,
// real processes on one SQLite file or PostgreSQL database), both killed -9 the moment their
// binding write is done: at most one of the look-alikes is bound, since the database decides
// each binding against the others (key-store.ts). Before, each inserted and then looked, and a
// kill between kept both.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { testDatabases, useTestDb } from "../../testing/db";
import { foldedId, looksAlike } from "./bound-tokens";
import { runnerKeyStore } from "./key-store";

const ROOT = join(import.meta.dirname, "../../..");

/** A claim held before its write; `go` lets it write, `kill9` once it stopped after it. */
async function heldClaim(url: string, runnerId: string) {
  const child = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      "server/executors/runner/key-claim-child.ts",
      url,
      runnerId,
      randomBytes(32).toString("base64url"),
    ],
    { cwd: ROOT, stdio: ["pipe", "pipe", "pipe"] },
  );
  let out = "";
  let err = "";
  child.stderr!.on("data", (d) => (err += d));
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  const said = (line: string) =>
    new Promise<void>((resolve, reject) => {
      const check = () => out.includes(`${line}\n`) && resolve();
      child.stdout!.on("data", (d) => ((out += d), check()));
      child.once("exit", (code) => reject(new Error(`child exited ${code}: ${out}\n${err}`)));
      check();
    });
  await said("at write");
  return {
    go: () => child.stdin!.write("go\n"),
    stopped: () => said("stopped"),
    out: () => out,
    kill9: async () => {
      child.kill("SIGKILL");
      await exited;
    },
  };
}

describe.each(testDatabases())("look-alike runner ids bound at once by servers killed -9, on %s", (provider) => {
  const t = useTestDb(provider);

  it.each([
    ["a Latin and a Cyrillic o", "gpu-o", "gpu-\u043e"],
    ["a Cyrillic s and a Latin c", "\u0441i-7", "ci-7"],
    ["two different non-ASCII letters", "x-\u0430", "x-\u0431"],
  ])("%s: one binding at most", { timeout: 60_000 }, async (_, first, second) => {
    const claims = await Promise.all([heldClaim(t.current.url, first), heldClaim(t.current.url, second)]);
    try {
      for (const c of claims) c.go();
      await Promise.all(claims.map((c) => c.stopped()));
    } finally {
      await Promise.all(claims.map((c) => c.kill9()));
    }
    const rows = await t.current.db.runnerIdKey.findMany({
      where: { idKey: { in: [foldedId(first), foldedId(second)] } },
    });
    expect(rows, claims.map((c) => c.out()).join("\n")).toHaveLength(1);
  });

  it("the database's look-alike test is looksAlike's, for spellings an attacker would try", async () => {
    const store = runnerKeyStore(t.current.db, t.current.provider);
    const pairs = [
      ["gpu-1", "gpu-2"],
      ["gpu-1", "GPU-l"],
      ["gpu-0", "gpu-\u00f6"],
      ["ab", "a\u{1f600}"],
      ["a\u{1f600}", "a\u{1f601}"],
      ["a\u{1f600}b", "ab"],
      ["run\u200bner", "rumner"],
      ["r_1", "r%1"],
      ["r%", "rx"],
      ["x\u0301y", "xz"],
      ["\uff21b", "ab"],
      ["a-b", "a\u2010b"],
      ["ab", "abc"],
      ["\u0430\u0431", "zz"],
    ];
    for (const [i, [a, b]] of pairs.entries()) {
      const tag = `-${provider}${i}`;
      expect(await store.claim(a + tag, randomBytes(32).toString("base64url"))).toMatchObject({ ok: true });
      const second = await store.claim(b + tag, randomBytes(32).toString("base64url"));
      const same = foldedId(a + tag) === foldedId(b + tag);
      expect({ a, b, ok: second.ok }).toEqual({ a, b, ok: !same && !looksAlike(a + tag, b + tag) });
    }
  });
});
