// Production start builds the Next app when its build is missing or older than its inputs, so
// `npm start` on a fresh clone just works and a pulled change is never served stale.
import { createHash } from "node:crypto";
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
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
      hash.update(relative(root, join(root, file))).update("\0").update(readFileSync(join(root, file))).update("\0");
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

export async function ensureNextBuild(root: string, log: (line: string) => void): Promise<void> {
  if (buildIsFresh(root)) return;
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
