// Secrets of sign-in and sharing: the server's cookie key (kept in the data folder, so cookies
// survive a restart and die with the folder), HMAC-signed values, random tokens and their
// hashes. Only hashes of tokens are ever stored; every comparison runs in constant time.
import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { join } from "node:path";
import { loadKeyFile } from "./key-file";

const SECRET_FILE = "cookie-secret";

/** The data folder's cookie key, created on first use (readable by this user only). */
export function loadSecret(dataDir: string): Buffer {
  const file = join(dataDir, SECRET_FILE);
  return loadKeyFile(
    file,
    (key) => key.length >= 32,
    `${file} is damaged (expected 32 random bytes, base64url): delete it to sign everyone out and start over`,
  );
}

/** A fresh token: `bytes` random bytes, base64url (16 bytes = 128 bits for share links). */
export const newToken = (bytes = 16): string => randomBytes(bytes).toString("base64url");

export const hashToken = (token: string): string => createHash("sha256").update(token, "utf8").digest("hex");

/** Constant-time equality of two strings (unequal lengths are simply unequal). */
export function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a, "utf8");
  const y = Buffer.from(b, "utf8");
  return x.length === y.length && timingSafeEqual(x, y);
}

const mac = (key: Buffer, body: string) => createHmac("sha256", key).update(body, "utf8").digest("base64url");

/** A key of its own for one purpose (preview tickets), so its values never verify as another's. */
export const deriveKey = (key: Buffer, purpose: string): Buffer =>
  createHmac("sha256", key).update(`quiver:${purpose}`, "utf8").digest();

/** `parts` (no dots in them) joined with their HMAC: `a.b.c.<mac>`. */
export function sign(key: Buffer, parts: string[]): string {
  if (parts.some((p) => p.includes(".") || p === "")) throw new Error("signed parts must be non-empty and dot-free");
  const body = parts.join(".");
  return `${body}.${mac(key, body)}`;
}

/** The parts of a value `sign` made with this key, or null for anything else. */
export function verify(key: Buffer, value: string, count: number): string[] | null {
  const parts = value.split(".");
  if (parts.length !== count + 1) return null;
  const given = parts.pop()!;
  return sameText(given, mac(key, parts.join("."))) ? parts : null;
}
