// The runner's own key (identity-key.ts): made once, 0600 in a 0700 folder, the same at the next
// start, refused when others may read it, and out of reach of the commands a real runner runs in
// its sandbox, wherever the operator keeps it.
import { describe, expect, it } from "vitest";
import { chmodSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cleanupsAfterEach } from "../server/testing/cleanups";
import { runShell, spawnRunner, startServer, tempDir, waitFor } from "../server/testing/runner";
import type { RunnerHello } from "../server/protocol/runner";
import { KeyFileError, loadRunnerKey } from "./identity-key";
import { sandboxInfo } from "./exec/sandbox";

const cleanups = cleanupsAfterEach();

function folder(base = tmpdir()): string {
  const d = mkdtempSync(join(base, "quiver-key-"));
  cleanups.push(() => rmSync(d, { recursive: true, force: true }));
  return d;
}

describe("the runner's key", () => {
  it("is made 0600 in a new 0700 folder, and the same key is read at the next start", () => {
    const path = join(folder(), "state", "quiver", "runner-key.pem");
    const made = loadRunnerKey(path);
    expect(made.created).toBe(true);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(join(path, "..")).mode & 0o777).toBe(0o700);
    const again = loadRunnerKey(path);
    expect(again.created).toBe(false);
    expect(again.publicKey).toBe(made.publicKey);
    expect(again.publicKey).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it("is refused when others may read it, or when it is not an Ed25519 key", () => {
    const path = join(folder(), "runner-key.pem");
    loadRunnerKey(path);
    chmodSync(path, 0o644);
    expect(() => loadRunnerKey(path)).toThrow(KeyFileError);
    expect(() => loadRunnerKey(path)).toThrow(/open to other users \(mode 0644\): run chmod 600/);
    writeFileSync(path, "not a key\n", { mode: 0o600 });
    chmodSync(path, 0o600);
    expect(() => loadRunnerKey(path)).toThrow(/not a private key in PEM/);
  });

  it("is the one key of several runners starting at once with one file", async () => {
    const path = join(folder(), "runner-key.pem");
    const keys = await Promise.all(Array.from({ length: 8 }, async () => loadRunnerKey(path)));
    expect(new Set(keys.map((k) => k.publicKey)).size).toBe(1);
    expect(keys.filter((k) => k.created)).toHaveLength(1);
  });

  it.runIf(sandboxInfo("auto").available)(
    "a real runner uses it across restarts, and its sandboxed commands cannot read it",
    async () => {
      // Where an operator would keep it (/etc/quiver): not in a home, nor under /tmp, which
      // the sandbox replaces with its own.
      const etc = realpathSync(folder("/var/tmp"));
      const keyFile = join(etc, "runner-key.pem");
      writeFileSync(join(etc, "beside.txt"), "visible\n");
      const dir = await tempDir();
      cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
      const s = await startServer();
      cleanups.push(() => s.close());
      const hellos: RunnerHello[] = [];
      s.pool.onStatus((e) => void (e.connected && hellos.push(e.hello)));
      const start = () => {
        const r = spawnRunner({ url: s.url, workspace: dir, args: ["--id", "keyed-1", "--key-file", keyFile] });
        cleanups.push(() => r.stop());
        return r;
      };
      const first = start();
      await waitFor(() => hellos.length === 1, 30_000, "the runner");
      expect(statSync(keyFile).mode & 0o777).toBe(0o600);
      const pem = readFileSync(keyFile, "utf8");
      expect(hellos[0].publicKey).toBe(loadRunnerKey(keyFile).publicKey);
      expect(hellos[0].sandbox.available).toBe(true);

      s.pool.bind("key-probe", "keyed-1");
      const command = `cat ${keyFile} 2>&1; echo "[$(wc -c < ${keyFile})]"; cat ${etc}/beside.txt`;
      const r = await runShell(s.pool, command, { sessionId: "key-probe" });
      expect(r.meta).toMatchObject({ sandboxed: true });
      expect(r.output).not.toContain("PRIVATE KEY");
      expect(r.output).toMatch(/runner-key.pem: Permission denied|\[0\]/);
      expect(r.output).toContain("visible"); // the folder around it is not hidden

      await first.stop();
      start();
      await waitFor(() => hellos.length === 2, 30_000, "the runner again");
      expect(hellos[1].publicKey).toBe(hellos[0].publicKey);
      expect(readFileSync(keyFile, "utf8")).toBe(pem);
    },
    90_000,
  );
});
