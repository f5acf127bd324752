// The runner's own Ed25519 key pair: a server that binds runner ids to keys (trust on first use,
// server/executors/runner/key-store.ts) knows by it that a runner of the shared token saying an
// id is the one that first said it. Whoever reads the private key can be this runner, its
// sessions and their calls: it is kept in a file only this user may read (0600, in a folder it
// makes 0700), never inside a served folder, and masked in every sandbox (exec/host-secrets.ts).
// A start killed or out of disk while making it leaves no key file or a whole one (written to a
// temp, fsynced, then linked); its temp is removed by the next start, once the process its name
// marks (pid, start time and boot: a reused pid is not it) is gone. A key file that is empty or
// a key cut short (what a disk that lost its tail leaves) does not stop the start: it is set
// aside beside it, never deleted (it may be a bound key an operator can still recover), a new key
// is made, and the start says so; a server that bound this runner's id to the old key refuses the
// new one until an admin unbinds it, which is the point of the binding. Any other file that is
// not a key (--key-file naming the wrong file) is refused and left alone.
import { createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, sign } from "node:crypto";
import {
  closeSync,
  fstatSync,
  fsyncSync,
  linkSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  constants,
  unlinkSync,
  writeSync,
} from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, join } from "node:path";
import { MARK_PATTERN, markAlive, processMark } from "./pid-alive";

export const KEY_FILE_VAR = "QUIVER_RUNNER_KEY_FILE";

/** A key file is one PEM block: anything much larger was named by mistake. */
const MAX_KEY_FILE_BYTES = 16 * 1024;

export class KeyFileError extends Error {}

export interface RunnerKey {
  /** The file it is kept in. */
  path: string;
  /** Raw 32 bytes, base64url, as the hello carries it. */
  publicKey: string;
  /** Made by this start (not read from an earlier one). */
  created: boolean;
  /** Where an earlier key file that held no usable key was set aside (this start made a new key). */
  setAside?: string;
  /** An Ed25519 signature of `message`, base64url. */
  sign(message: Uint8Array): string;
}

/** Where the key is kept unless told: the runner's state folder in its home (masked in sandboxes). */
export function defaultKeyFile(home = process.env.HOME || homedir()): string {
  return join(home, ".local", "state", "quiver", "runner-key.pem");
}

/** The file's text, or undefined when there is none; refused, as ssh refuses a private key, when
 *  it is not a regular file of this user that only this user may read. */
function readKeyFile(path: string): { text: string; ino: number } | undefined {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return undefined;
    throw new KeyFileError(`cannot read the runner key ${path}: ${code ?? (err as Error).message}`);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new KeyFileError(`the runner key ${path} is not a regular file`);
    if (process.getuid && st.uid !== process.getuid())
      throw new KeyFileError(`the runner key ${path} belongs to another user (uid ${st.uid})`);
    if ((st.mode & 0o077) !== 0)
      throw new KeyFileError(
        `the runner key ${path} is open to other users (mode ${(st.mode & 0o777).toString(8).padStart(4, "0")}): run chmod 600 ${path}`,
      );
    if (st.size > MAX_KEY_FILE_BYTES) throw new KeyFileError(`the runner key ${path} is larger than 16 KiB`);
    return { text: readFileSync(fd, "utf8"), ino: st.ino };
  } finally {
    closeSync(fd);
  }
}

const PEM_HEAD = "-----BEGIN PRIVATE KEY-----";

/** Whether `text` is what a key file cut short leaves: nothing, or a private key's PEM without its end. */
function cutShort(text: string): boolean {
  const t = text.trimStart();
  if (t.length < PEM_HEAD.length) return PEM_HEAD.startsWith(t.trimEnd());
  if (!t.startsWith(PEM_HEAD) || t.includes("-----END PRIVATE KEY-----")) return false;
  try {
    createPrivateKey(text);
    return false;
  } catch {
    return true;
  }
}

/** Temps of starts killed while writing the key (the process their name marks gone): removed. */
function removeStaleTemps(path: string): void {
  const prefix = `${basename(path)}.`;
  const temp = new RegExp(`^(${MARK_PATTERN})-[0-9a-f]{12}\\.tmp$`);
  let names: string[];
  try {
    names = readdirSync(dirname(path));
  } catch {
    return;
  }
  for (const name of names) {
    const m = name.startsWith(prefix) && temp.exec(name.slice(prefix.length));
    if (!m || markAlive(m[1])) continue;
    try {
      unlinkSync(join(dirname(path), name));
    } catch {
      // another start removed it
    }
  }
}

/** A new key at `path` unless one appears first (several runners starting at once keep the one
 *  linked first): written whole to a temp and fsynced, so `path` never names a partial key. */
function makeKey(path: string): boolean {
  try {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  } catch (err) {
    throw new KeyFileError(`cannot make the folder of the runner key ${path}: ${(err as Error).message}`);
  }
  const pem = generateKeyPairSync("ed25519").privateKey.export({ type: "pkcs8", format: "pem" }) as string;
  const tmp = `${path}.${processMark() ?? process.pid}-${randomBytes(6).toString("hex")}.tmp`;
  try {
    const fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
    try {
      const bytes = Buffer.from(pem);
      for (let at = 0; at < bytes.length;) at += writeSync(fd, bytes, at);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    linkSync(tmp, path);
    syncFolder(dirname(path));
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST")
      throw new KeyFileError(`cannot write the runner key ${path}: ${(err as Error).message}`);
    return false;
  } finally {
    try {
      unlinkSync(tmp);
    } catch {
      // never written
    }
  }
}

function syncFolder(dir: string): void {
  const fd = openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** The unusable key file read as `ino`, renamed beside it (undefined: another start moved it first). */
function setAside(path: string, ino: number): string | undefined {
  const aside = `${path}.unusable-${new Date().toISOString().replace(/[:.]/g, "")}-${randomBytes(3).toString("hex")}`;
  try {
    // Only the file that was read: another start may have put a good key there since.
    if (lstatSync(path).ino !== ino) return undefined;
    renameSync(path, aside);
    return aside;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new KeyFileError(`cannot set aside the unusable runner key ${path}: ${(err as Error).message}`);
  }
}

/** The key in `path`, made there first when there is none or it holds no key (see the header). */
export function loadRunnerKey(path: string): RunnerKey {
  removeStaleTemps(path);
  let read = readKeyFile(path);
  let created = false;
  let movedAside: string | undefined;
  if (read !== undefined && cutShort(read.text)) {
    movedAside = setAside(path, read.ino);
    read = undefined;
  }
  if (read === undefined) {
    created = makeKey(path);
    read = readKeyFile(path);
    if (read === undefined) throw new KeyFileError(`the runner key ${path} vanished as it was written`);
  }
  const text = read.text;
  let privateKey;
  try {
    privateKey = createPrivateKey(text);
  } catch {
    throw new KeyFileError(`the runner key ${path} is not a private key in PEM`);
  }
  if (privateKey.asymmetricKeyType !== "ed25519")
    throw new KeyFileError(`the runner key ${path} is a ${privateKey.asymmetricKeyType ?? "?"} key, not Ed25519`);
  const publicKey = createPublicKey(privateKey).export({ format: "jwk" }).x!;
  return {
    path,
    publicKey,
    created,
    ...(movedAside ? { setAside: movedAside } : {}),
    sign: (message) => sign(null, message, privateKey).toString("base64url"),
  };
}
