// The runner's key (identity-key.ts) under faults: real processes making it killed -9 at random
// moments, all at once on one path; the key folder on a small full tmpfs; a key file left empty
// or cut short. Afterwards the path holds no key or one whole key, the next start loads it (or
// makes one), no temp holding a private key is left, and an unusable key file is kept aside,
// never deleted, with the start saying so.
import { spawn, type ChildProcess } from "node:child_process";
import { describe, expect, it } from "vitest";
import {
  accessSync,
  constants,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { createPrivateKey, generateKeyPairSync } from "node:crypto";
import { loadRunnerKey, KeyFileError } from "./identity-key";
import { MARK_PATTERN } from "./pid-alive";
import { mountTmpfs, tmpfsRefusal } from "../server/testing/tmpfs";

const root = join(import.meta.dirname, "..");

function folder(): string {
  return mkdtempSync(join(tmpdir(), "quiver-key-faults-"));
}

/** A real process making keys k0.pem, k1.pem, … in `dir` one after another, killed -9 `ms` after
 *  its first one (each takes about a millisecond: the kill lands inside one of them; counted from
 *  the first key, not the start, which a loaded machine may not run at once). */
async function makeKeysKilled(dir: string, ms: number): Promise<void> {
  const script = `import(${JSON.stringify(join(root, "runner/identity-key.ts"))}).then((m) => { process.stdout.write("ready\\n"); for (let i = 0; ; i++) m.loadRunnerKey(${JSON.stringify(dir)} + "/k" + i + ".pem"); })`;
  const child = spawn(process.execPath, ["--import", "tsx", "-e", script], {
    cwd: root,
    stdio: ["ignore", "pipe", "inherit"],
  });
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  await new Promise<void>((resolve) => child.stdout!.once("data", () => resolve()));
  for (const deadline = Date.now() + 20_000; !existsSync(join(dir, "k0.pem")) && Date.now() < deadline;)
    await new Promise((r) => setTimeout(r, 2));
  await new Promise((r) => setTimeout(r, ms));
  child.kill("SIGKILL");
  await exited;
}

/** A real process that writes a key temp named as a start of its own would, then waits. */
async function tempWriter(path: string) {
  const script = `import(${JSON.stringify(join(root, "runner/pid-alive.ts"))}).then((m) => { const t = ${JSON.stringify(path)} + "." + m.processMark() + "-0123456789ab.tmp"; require("node:fs").writeFileSync(t, "-----BEGIN PRIVATE KEY-----\\nhalf", { mode: 0o600 }); process.stdout.write(t + "\\n"); setInterval(() => {}, 1000); })`;
  const child = spawn(process.execPath, ["--import", "tsx", "-e", script], {
    cwd: root,
    stdio: ["ignore", "pipe", "inherit"],
  });
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  const temp = await new Promise<string>((resolve) => {
    let out = "";
    child.stdout!.on("data", (d) => (out += d) && out.includes("\n") && resolve(out.trim()));
  });
  return { child, exited, temp };
}

const LAST_PID = "/proc/sys/kernel/ns_last_pid";
function canPickPids(): boolean {
  try {
    accessSync(LAST_PID, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** A new process with the pid `pid` had (root: the kernel's next pid set just below it; other
 *  processes starting meanwhile may take it first, so tried again). */
function reusePid(pid: number): ChildProcess {
  for (let i = 0; i < 200; i++) {
    writeFileSync(LAST_PID, String(pid - 1));
    const child = spawn("sleep", ["60"], { stdio: "ignore" });
    if (child.pid === pid) return child;
    child.kill("SIGKILL");
  }
  throw new Error(`pid ${pid} could not be taken again`);
}

describe("the runner's key under faults", () => {
  it(
    "killed -9 while making it: each key file whole, and the next start uses it or makes it, leaving no temp",
    { timeout: 120_000 },
    async () => {
      let tempsLeft = 0;
      for (let round = 0; round < 8; round++) {
        const dir = folder();
        try {
          await makeKeysKilled(dir, 5 + round * 7);
          const names = readdirSync(dir);
          const keys = names.filter((n) => /^k\d+\.pem$/.test(n));
          expect(keys.length).toBeGreaterThan(0);
          for (const k of keys)
            expect(createPrivateKey(readFileSync(join(dir, k), "utf8")).asymmetricKeyType).toBe("ed25519");
          // At most the one being made when the kill came: its temp, never a partial key file.
          const temps = names.filter((n) => n.endsWith(".tmp"));
          expect(temps.length).toBeLessThanOrEqual(1);
          tempsLeft += temps.length;
          // The next start of the path being made when the kill came (its temp's, when one was left:
          // killed after the write, before or after the link).
          const made = temps.length
            ? temps[0].replace(new RegExp(`\\.${MARK_PATTERN}-[0-9a-f]{12}\\.tmp$`), "")
            : `k${keys.length}.pem`;
          const next = join(dir, made);
          const before = names.includes(made) ? readFileSync(next, "utf8") : undefined;
          const key = loadRunnerKey(next);
          expect(key.setAside).toBeUndefined();
          expect(key.created).toBe(before === undefined);
          expect(readdirSync(dir).filter((n) => n.endsWith(".tmp"))).toEqual([]);
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      }
      // Said, so a run where no kill came between a temp's write and its link is visible.
      console.log(`key kills that left a temp: ${tempsLeft} of 8`);
    },
  );

  it("removes the temp of a start killed between writing and linking, but not a live start's", () => {
    const dir = folder();
    try {
      const path = join(dir, "runner-key.pem");
      const dead = `${path}.999999-0123456789ab.tmp`;
      const live = `${path}.${process.ppid}-0123456789ab.tmp`;
      writeFileSync(dead, "-----BEGIN PRIVATE KEY-----\nhalf", { mode: 0o600 });
      writeFileSync(live, "-----BEGIN PRIVATE KEY-----\nhalf", { mode: 0o600 });
      const key = loadRunnerKey(path);
      expect(key.created).toBe(true);
      expect(readdirSync(dir).sort()).toEqual(["runner-key.pem", `runner-key.pem.${process.ppid}-0123456789ab.tmp`]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.skipIf(!canPickPids())(
    "a temp whose writer was killed -9 is removed even when its pid now names another process",
    { timeout: 60_000 },
    async () => {
      const dir = folder();
      try {
        const path = join(dir, "runner-key.pem");
        const live = await tempWriter(path);
        const killed = await tempWriter(path);
        killed.child.kill("SIGKILL");
        await killed.exited;
        // The pid taken again by a new process, as a busy machine does.
        const reuser = reusePid(killed.child.pid!);
        const ns = /\d+/.exec(readlinkSync("/proc/self/ns/pid"))![0];
        const earlier = `${path}.${process.pid}-1-${"0".repeat(32)}-${ns}-0123456789ab.tmp`; // another boot's
        writeFileSync(earlier, "-----BEGIN PRIVATE KEY-----\nhalf", { mode: 0o600 });
        try {
          expect(readdirSync(dir)).toHaveLength(3);
          loadRunnerKey(path);
          expect(readdirSync(dir).sort()).toEqual(["runner-key.pem", basename(live.temp)]);
        } finally {
          reuser.kill("SIGKILL");
          live.child.kill("SIGKILL");
        }
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );

  it.each([
    ["empty", () => ""],
    ["cut short", (pem: string) => pem.slice(0, 40)],
  ])("a key file left %s does not stop the start: kept aside, a new key made, the start told", (_, damage) => {
    const dir = folder();
    try {
      const path = join(dir, "runner-key.pem");
      const old = loadRunnerKey(path);
      const pem = readFileSync(path, "utf8");
      writeFileSync(path, damage(pem), { mode: 0o600 });
      const key = loadRunnerKey(path);
      expect(key.created).toBe(true);
      expect(key.publicKey).not.toBe(old.publicKey);
      expect(key.setAside).toMatch(/runner-key\.pem\.unusable-/);
      expect(readFileSync(key.setAside!, "utf8")).toBe(damage(pem));
      expect(statSync(key.setAside!).mode & 0o777).toBe(0o600);
      // The next start reads the new key as it is.
      expect(loadRunnerKey(path)).toMatchObject({ publicKey: key.publicKey, created: false });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("still refuses a key file others may read, and a key that is not Ed25519 (not a crash's doing)", () => {
    const dir = folder();
    try {
      const path = join(dir, "runner-key.pem");
      writeFileSync(path, "", { mode: 0o644 });
      expect(() => loadRunnerKey(path)).toThrow(/open to other users/);
      const rsa = `${join(dir, "rsa.pem")}`;
      writeFileSync(
        rsa,
        generateKeyPairSync("rsa", { modulusLength: 1024 }).privateKey.export({
          type: "pkcs8",
          format: "pem",
        }) as string,
        { mode: 0o600 },
      );
      expect(() => loadRunnerKey(rsa)).toThrow(/not Ed25519/);
      expect(readdirSync(dir).sort()).toEqual(["rsa.pem", "runner-key.pem"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  const refusal = tmpfsRefusal();
  it.skipIf(refusal !== undefined)("on a full disk: a clear error, no key file and no temp left", () => {
    const disk = mountTmpfs("64k");
    if (typeof disk === "string") throw new Error(disk);
    try {
      const path = join(disk.dir, "state", "runner-key.pem");
      loadRunnerKey(join(disk.dir, "warm.pem")); // the folder's own blocks, then fill the rest
      try {
        writeFileSync(join(disk.dir, "fill"), Buffer.alloc(1024 * 1024));
      } catch {
        /* full */
      }
      let err: unknown;
      try {
        loadRunnerKey(path);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(KeyFileError);
      expect(String(err)).toMatch(/cannot (write the runner key|make the folder).*ENOSPC/);
      let left: string[] = [];
      try {
        left = readdirSync(join(disk.dir, "state"));
      } catch {
        /* the folder could not be made */
      }
      expect(left).toEqual([]);
      // Room again: the next start makes it.
      rmSync(join(disk.dir, "fill"));
      expect(loadRunnerKey(path).created).toBe(true);
    } finally {
      disk.unmount();
    }
  });
});
