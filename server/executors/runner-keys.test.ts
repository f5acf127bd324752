// Runner ids of the shared token bound to runners' keys, trusted on first use (runner/key-store.ts,
// runner/handshake.ts): real pools on real HTTP servers over a real database (SQLite and
// PostgreSQL), hand-driven runner sockets that sign as a runner does or as an attacker would, the
// release command run as an operator runs it, and a real runner process.
import { describe, expect, it } from "vitest";
import { execFile } from "node:child_process";
import { generateKeyPairSync, sign } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import WebSocket from "ws";
import { openDb } from "../db";
import { runnerProofMessage, type ServerToRunner } from "../protocol/runner";
import { cleanupsAfterEach } from "../testing/cleanups";
import { testDatabases, useTestDb } from "../testing/db";
import { spawnRunner, startServer, tempDir, waitFor, type TestServer } from "../testing/runner";
import { helloRunner, runnerHello, SHARED_RUNNER_TOKEN as SHARED, type RunnerSocket } from "../testing/runner-hello";
import { foldedId } from "./runner/bound-tokens";
import { runnerKeyStore } from "./runner/key-store";

const ROOT = join(import.meta.dirname, "../..");
const OWN = "own-runner-token-0123456789abcd";

const cleanups = cleanupsAfterEach();

interface Key {
  publicKey: string;
  sign(message: Uint8Array): string;
}
function newKey(): Key {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  return {
    publicKey: publicKey.export({ format: "jwk" }).x!,
    sign: (m) => sign(null, m, privateKey).toString("base64url"),
  };
}

interface Fake extends RunnerSocket {
  /** The challenge the server sent, once it did. */
  challenge: Promise<string>;
  /** The proof it sent. */
  proof?: string;
}

/**
 * A hand-made runner of `token` saying hello as `runnerId` with `key`'s public key (or
 * `publicKey`), answering the challenge as `answer` says (default: signed by `key`, as a runner does).
 */
async function fakeRunner(
  url: string,
  runnerId: string,
  key: Key | undefined,
  o: { token?: string; answer?: (nonce: string) => string | undefined; publicKey?: string } = {},
): Promise<Fake> {
  const publicKey = o.publicKey ?? key?.publicKey;
  const hello = publicKey ? { publicKey } : {};
  const fake = (await helloRunner(url, o.token ?? SHARED, runnerId, hello, cleanups)) as Fake;
  fake.challenge = new Promise((resolve) =>
    fake.ws.on("message", (d) => {
      const msg = JSON.parse(d.toString()) as ServerToRunner;
      if (msg.type !== "challenge") return;
      resolve(msg.nonce);
      const signature = o.answer ? o.answer(msg.nonce) : key!.sign(runnerProofMessage(msg.nonce, runnerId, publicKey!));
      if (signature === undefined) return;
      fake.proof = signature;
      fake.ws.send(JSON.stringify({ type: "proof", signature }));
    }),
  );
  return fake;
}

const refusedWith = async (fake: Fake) => (await fake.closed).code;

describe.each(testDatabases())("runner ids bound to keys on %s", (provider) => {
  const t = useTestDb(provider);

  /** A server whose pool keeps keys in the test database, through a client of its own (as another process's). */
  async function server(extra: Partial<Parameters<typeof startServer>[0]> = {}): Promise<TestServer> {
    const handle = await openDb(t.current.url);
    const s = await startServer({ tokens: [SHARED], keys: runnerKeyStore(handle.db, handle.provider), ...extra });
    let closed = false;
    const close = async () => {
      if (closed) return;
      closed = true;
      await s.close();
      await handle.close();
    };
    cleanups.push(close);
    return { ...s, close };
  }
  const live = (s: TestServer, id: string) => waitFor(() => s.pool.isLive(id), 10_000, `${id} connected`);
  const gone = async (s: TestServer, f: Fake, id: string) => {
    f.ws.close();
    await f.closed;
    await waitFor(() => !s.pool.isLive(id), 5_000, `${id} gone`);
  };

  it("the first hello binds the id; the same key reconnects, also after a restart on the same database", async () => {
    const key = newKey();
    const s1 = await server();
    const first = await fakeRunner(s1.url, "build-7", key);
    await live(s1, "build-7");
    const row = await t.current.db.runnerIdKey.findUnique({ where: { idKey: foldedId("build-7") } });
    expect(row).toMatchObject({ runnerId: "build-7", publicKey: key.publicKey });
    expect(s1.logs.join("\n")).toMatch(/runner id "build-7" bound to the key it first connected with/);
    await gone(s1, first, "build-7");
    await fakeRunner(s1.url, "build-7", key);
    await live(s1, "build-7");
    await s1.close();
    const s2 = await server();
    await fakeRunner(s2.url, "build-7", key);
    await live(s2, "build-7");
    const seen = await t.current.db.runnerIdKey.findUnique({ where: { idKey: row!.idKey } });
    expect(seen!.lastSeen.getTime()).toBeGreaterThan(row!.lastSeen.getTime());
    expect(seen!.firstSeen).toEqual(row!.firstSeen);
  }, 60_000);

  it("another key for the id, or for one that looks like it, is refused 4005 while and after the first is connected", async () => {
    const s = await server();
    const owner = await fakeRunner(s.url, "gpu-1", newKey());
    await live(s, "gpu-1");
    const thief = newKey();
    for (const id of ["gpu-1", "GPU-1", " gpu-1", "gpu-1\u200b", "g\u0440u-1", "gpu-l"])
      expect(await refusedWith(await fakeRunner(s.url, id, thief)), id).toBe(4005);
    expect(s.pool.isLive("gpu-1")).toBe(true);
    await gone(s, owner, "gpu-1");
    const after = await fakeRunner(s.url, "gpu-1", thief);
    expect(await after.closed).toEqual({ code: 4005, reason: "this runner id is bound to another runner's key" });
    expect(s.pool.isLive("gpu-1")).toBe(false);
    expect(s.logs.join("\n")).toMatch(/runner id "gpu-1" refused: it is bound to another runner's key/);
    expect(s.logs.join("\n")).toMatch(/runner id "g\u0440u-1" refused: it looks like runner id "gpu-1"/);
  }, 60_000);

  it("a proof from an earlier connection, or by another key than the hello's, is refused", async () => {
    const s = await server();
    const key = newKey();
    const earlier = await fakeRunner(s.url, "ci-3", key);
    await live(s, "ci-3");
    await gone(s, earlier, "ci-3");
    // Its hello and signature as they went over the wire, replayed on a new connection.
    const replay = await fakeRunner(s.url, "ci-3", undefined, {
      publicKey: key.publicKey,
      answer: () => earlier.proof,
    });
    expect(await refusedWith(replay)).toBe(4005);
    expect(await replay.challenge).not.toBe(await earlier.challenge);
    // The owner's public key, signed with the attacker's own.
    const other = newKey();
    expect(await refusedWith(await fakeRunner(s.url, "ci-3", other, { publicKey: key.publicKey }))).toBe(4005);
    // An id never bound, with a proof by another key than the one named: nothing is bound.
    expect(await refusedWith(await fakeRunner(s.url, "ci-4", other, { publicKey: newKey().publicKey }))).toBe(4005);
    expect(await t.current.db.runnerIdKey.findUnique({ where: { idKey: foldedId("ci-4") } })).toBeNull();
    expect(s.logs.join("\n")).toMatch(
      /runner id "ci-3" refused: its proof is not a signature of this connection's challenge/,
    );
    expect(s.pool.isLive("ci-3")).toBe(false);
  }, 60_000);

  it("two first hellos at once, on two servers of the database: exactly one binds the id", async () => {
    const a = await server();
    const b = await server();
    for (let round = 0; round < 4; round++) {
      const id = `race-${round}`;
      const [x, y] = await Promise.all([fakeRunner(a.url, id, newKey()), fakeRunner(b.url, id, newKey())]);
      const outcome = await Promise.race([
        Promise.all([x.closed, y.closed]).then(() => "both refused"),
        waitFor(() => a.pool.isLive(id) || b.pool.isLive(id), 10_000, id).then(
          async () => `refused ${await refusedWith(a.pool.isLive(id) ? y : x)}`,
        ),
      ]);
      expect(outcome, id).toBe("refused 4005");
      expect([a.pool.isLive(id), b.pool.isLive(id)].filter(Boolean)).toHaveLength(1);
      expect(await t.current.db.runnerIdKey.count({ where: { idKey: foldedId(id) } })).toBe(1);
    }
  }, 90_000);

  it("released by an operator, the id binds to the next key; the connected runner stays until it reconnects", async () => {
    const s = await server();
    const old = newKey();
    const lost = await fakeRunner(s.url, "rebuilt-1", old);
    await live(s, "rebuilt-1");
    await gone(s, lost, "rebuilt-1");
    const rebuilt = newKey();
    expect(await refusedWith(await fakeRunner(s.url, "rebuilt-1", rebuilt))).toBe(4005);
    const release = async (id: string) => {
      const dataDir = mkdtempSync(join(tmpdir(), "quiver-release-"));
      try {
        const { stdout } = await promisify(execFile)("npm", ["run", "--silent", "runner:release", "--", id], {
          cwd: ROOT,
          env: { ...process.env, DATABASE_URL: t.current.url, QUIVER_DATA_DIR: dataDir },
        });
        return stdout;
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
      }
    };
    // Any spelling of the id releases it.
    expect(await release("Rebuilt-1")).toMatch(/released runner id "rebuilt-1"/);
    const now = await fakeRunner(s.url, "rebuilt-1", rebuilt);
    await live(s, "rebuilt-1");
    expect(await refusedWith(await fakeRunner(s.url, "rebuilt-1", old))).toBe(4005);
    // Released while connected: the connection is left as it is.
    expect(await release("rebuilt-1")).toMatch(/released/);
    await new Promise((r) => setTimeout(r, 300));
    expect(s.pool.isLive("rebuilt-1")).toBe(true);
    expect(now.ws.readyState).toBe(WebSocket.OPEN);
    expect(await release("nobody-9")).toMatch(/bound to no key/);
  }, 90_000);

  it("a runner of the shared token without a key is told to upgrade; one with its own token needs none; bad keys are refused", async () => {
    const s = await server({ tokens: [SHARED, { token: OWN, runnerId: "own-1" }] });
    const old = await fakeRunner(s.url, "legacy-1", undefined);
    expect(await old.closed).toEqual({
      code: 4005,
      reason: "upgrade this runner: the server binds runner ids to runner keys",
    });
    expect(s.logs.join("\n")).toMatch(/runner id "legacy-1" refused: it sent no key .*upgrade it/);
    await fakeRunner(s.url, "own-1", undefined, { token: OWN });
    await live(s, "own-1");
    // Keys too long, short or not base64url never reach the check: the hello is not a hello.
    for (const publicKey of ["A".repeat(44), "A".repeat(10_000), "A".repeat(42) + "+", "x"])
      expect(await refusedWith(await fakeRunner(s.url, "bad-1", undefined, { publicKey })), publicKey).toBe(4002);
    // Another spelling of one key's bytes is no key of its own.
    const key = newKey();
    const b64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    // 32 bytes take 258 bits of 43 characters: the last character's lowest bit is padding.
    const alias = key.publicKey.slice(0, -1) + b64[b64.indexOf(key.publicKey.at(-1)!) ^ 1];
    expect(Buffer.from(alias, "base64url")).toEqual(Buffer.from(key.publicKey, "base64url"));
    expect(await refusedWith(await fakeRunner(s.url, "bad-2", key, { publicKey: alias }))).toBe(4005);
    // A hello twice, before the proof.
    const twice = await fakeRunner(s.url, "twice-1", key, { answer: () => undefined });
    await twice.challenge;
    twice.ws.send(runnerHello("twice-1", { publicKey: key.publicKey }));
    expect(await refusedWith(twice)).toBe(4002);
    expect(await t.current.db.runnerIdKey.count({ where: { idKey: { in: ["bad-1", "bad-2", "twice-l"] } } })).toBe(0);
  }, 60_000);

  it("a runner process keeps its id across a server restart; another with its own key is refused and says so", async () => {
    const dir = await tempDir();
    const keys = mkdtempSync(join(tmpdir(), "quiver-keys-"));
    cleanups.push(async () => {
      rmSync(dir, { recursive: true, force: true });
      rmSync(keys, { recursive: true, force: true });
    });
    let s = await server({ token: SHARED });
    const start = (url: string, keyFile: string) => {
      const r = spawnRunner({
        url,
        workspace: dir,
        token: SHARED,
        args: ["--id", "proc-1", "--key-file", join(keys, keyFile)],
        env: { ...process.env, QUIVER_SANDBOX: "off" },
      });
      cleanups.push(() => r.stop());
      return r;
    };
    const first = start(s.url, "first.pem");
    await waitFor(() => s.pool.isLive("proc-1"), 30_000, "proc-1");
    const port = s.port;
    await s.close();
    s = await server({ token: SHARED, port });
    await waitFor(() => s.pool.isLive("proc-1"), 30_000, "proc-1 again");
    const second = start(s.url, "second.pem");
    await waitFor(() => /refused runner .*proc-1.* \(4005/.test(second.stderr()), 30_000, "its refusal").catch((e) => {
      throw new Error(`${(e as Error).message}: ${second.stderr()}`);
    });
    expect(second.stderr()).toMatch(/bound to another runner's key/);
    expect(s.logs.join("\n")).toMatch(/runner id "proc-1" refused: it is bound to another runner's key/);
    expect(first.child.exitCode).toBeNull();
    expect(s.pool.isLive("proc-1")).toBe(true);
  }, 90_000);
});
