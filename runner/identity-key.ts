// The runner's own Ed25519 key pair: a server that binds runner ids to keys (trust on first use,
// server/executors/runner/key-store.ts) knows by it that a runner of the shared token saying an
// id is the one that first said it. Whoever reads the private key can be this runner, its
// sessions and their calls: it is kept in a file only this user may read (0600, in a folder it
// makes 0700), never inside a served folder, and masked in every sandbox (exec/host-secrets.ts).
import { createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, sign } from "node:crypto";
import {
  closeSync,
  fstatSync,
  linkSync,
  mkdirSync,
  openSync,
  readFileSync,
  constants,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";

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
  /** An Ed25519 signature of `message`, base64url. */
  sign(message: Uint8Array): string;
}

/** Where the key is kept unless told: the runner's state folder in its home (masked in sandboxes). */
export function defaultKeyFile(home = process.env.HOME || homedir()): string {
  return join(home, ".local", "state", "quiver", "runner-key.pem");
}

/** The file's text, or undefined when there is none; refused, as ssh refuses a private key, when
 *  it is not a regular file of this user that only this user may read. */
function readKeyFile(path: string): string | undefined {
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
    return readFileSync(fd, "utf8");
  } finally {
    closeSync(fd);
  }
}

/** The key in `path`, made there first when there is none (several runners starting at once
 *  keep the one written first: it appears whole, by a link, or not at all). */
export function loadRunnerKey(path: string): RunnerKey {
  let text = readKeyFile(path);
  let created = false;
  if (text === undefined) {
    try {
      mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    } catch (err) {
      throw new KeyFileError(`cannot make the folder of the runner key ${path}: ${(err as Error).message}`);
    }
    const pem = generateKeyPairSync("ed25519").privateKey.export({ type: "pkcs8", format: "pem" }) as string;
    const tmp = `${path}.${process.pid}-${randomBytes(6).toString("hex")}.tmp`;
    try {
      writeFileSync(tmp, pem, { mode: 0o600, flag: "wx" });
      linkSync(tmp, path);
      created = true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST")
        throw new KeyFileError(`cannot write the runner key ${path}: ${(err as Error).message}`);
    } finally {
      try {
        unlinkSync(tmp);
      } catch {
        // never written
      }
    }
    text = readKeyFile(path);
    if (text === undefined) throw new KeyFileError(`the runner key ${path} vanished as it was written`);
  }
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
    sign: (message) => sign(null, message, privateKey).toString("base64url"),
  };
}
