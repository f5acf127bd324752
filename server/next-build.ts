// Production start builds the Next app when its build is missing or older than its inputs, so
// `npm start` on a fresh clone just works and a pulled change is never served stale. Servers
// started together (the browser tests start two) build once: a lock file says who builds, the
// others wait for it and find the build fresh; a lock whose process is gone (kill -9) is taken over.
import { createHash } from "node:crypto";
import { closeSync, existsSync, openSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { tmpdir } from "node:os";
import { spawn } from "node:child_process";

const inputs = ["app", "public", "server/protocol", "next.config.mjs", "package-lock.json", "tsconfig.json"];

function* files(root: string, path: string): Generator<string> {
  const full = join(root, path);
  if (!existsSync(full)) return;
  const stat = statSync(full);
  if (stat.isFile()) {
    yield path;
    return;
  }
  for (const name of readdirSync(full).sort()) {
    if (name === "node_modules" || name.startsWith(".")) continue;
    if (/\.test\.tsx?$/.test(name)) continue;
    yield* files(root, join(path, name));
  }
}

export function buildFingerprint(root: string): string {
  const hash = createHash("sha256");
  for (const input of inputs) {
    for (const file of files(root, input)) {
      hash
        .update(relative(root, join(root, file)))
        .update("\0")
        .update(readFileSync(join(root, file)))
        .update("\0");
    }
  }
  return hash.digest("hex");
}

const stampFile = (root: string) => join(root, ".next", "quiver-build.sha256");

export function buildIsFresh(root: string): boolean {
  const stamp = stampFile(root);
  if (!existsSync(join(root, ".next", "BUILD_ID")) || !existsSync(stamp)) return false;
  return readFileSync(stamp, "utf8").trim() === buildFingerprint(root);
}

// Outside the tree (nothing to ignore) and outside .next (the build empties it); one per checkout.
const lockFile = (root: string) =>
  join(tmpdir(), `quiver-next-build-${createHash("sha256").update(root).digest("hex").slice(0, 16)}.lock`);

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Holds the build lock, waiting while a live process holds it; the release removes it. */
export async function lockBuild(root: string, log: (line: string) => void): Promise<() => void> {
  const file = lockFile(root);
  let said = false;
  for (;;) {
    try {
      const fd = openSync(file, "wx");
      writeFileSync(fd, String(process.pid));
      closeSync(fd);
      return () => rmSync(file, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    let holder = NaN;
    try {
      holder = Number(readFileSync(file, "utf8").trim());
    } catch {
      continue; // released meanwhile
    }
    // An empty file is one being written this instant; a dead holder's lock is stale.
    if (Number.isInteger(holder) && holder > 0 && !alive(holder)) {
      rmSync(file, { force: true });
      continue;
    }
    if (!said) log("another server is building the web app; waiting for it…");
    said = true;
    await new Promise((r) => setTimeout(r, 500));
  }
}

export async function ensureNextBuild(root: string, log: (line: string) => void): Promise<void> {
  if (buildIsFresh(root)) return;
  const release = await lockBuild(root, log);
  try {
    if (buildIsFresh(root)) return;
    await build(root, log);
  } finally {
    release();
  }
}

async function build(root: string, log: (line: string) => void): Promise<void> {
  log("building the web app (first start or changed sources)…");
  const fingerprint = buildFingerprint(root);
  await new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, [join(root, "node_modules", "next", "dist", "bin", "next"), "build"], {
      cwd: root,
      stdio: ["ignore", "inherit", "inherit"],
      env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1", NODE_ENV: "production" },
    });
    child.on("error", reject);
    child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`next build exited with ${code}`))));
  });
  writeFileSync(stampFile(root), fingerprint + "\n");
}
