// An org's OIDC client secret at rest: the SSO plugin keeps a provider's configuration as one
// JSON text (`SsoProvider.oidcConfig`); Quiver stores its `clientSecret` there encrypted
// (AES-256-GCM under a key derived from the data folder's key, bound to the provider's id), so a
// copy of the database alone does not give the secret away. Only two places see it in clear:
// the service that writes it (services/sso.ts) and the plugin's reads at sign-in, through
// `decryptProviderReads` on better-auth's adapter. Nothing returns it to a browser.
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { deriveKey } from "../crypto";

const PREFIX = "quiver-enc-v1:";

export const ssoSecretKey = (key: Buffer): Buffer => deriveKey(key, "sso-client-secret");

export function encryptSecret(key: Buffer, providerId: string, secret: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(Buffer.from(providerId, "utf8"));
  const body = Buffer.concat([cipher.update(secret, "utf8"), cipher.final()]);
  return PREFIX + Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64url");
}

/** The secret, or null when it was not encrypted with this key for this provider (a changed
 *  data folder key, a row copied to another provider id). */
export function decryptSecret(key: Buffer, providerId: string, stored: string): string | null {
  if (!stored.startsWith(PREFIX)) return null;
  try {
    const raw = Buffer.from(stored.slice(PREFIX.length), "base64url");
    const decipher = createDecipheriv("aes-256-gcm", key, raw.subarray(0, 12));
    decipher.setAAD(Buffer.from(providerId, "utf8"));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString("utf8");
  } catch {
    return null;
  }
}

type Row = Record<string, unknown> & { providerId?: unknown; oidcConfig?: unknown };

/** A provider row as the plugin reads it: `oidcConfig.clientSecret` in clear (empty when it cannot
 *  be decrypted, so the IdP refuses the client instead of Quiver sending ciphertext). */
export function decryptRow<T>(key: Buffer, row: T): T {
  const r = row as Row | null;
  if (!r || typeof r.oidcConfig !== "string" || typeof r.providerId !== "string") return row;
  try {
    const config = JSON.parse(r.oidcConfig) as Record<string, unknown>;
    if (typeof config.clientSecret !== "string") return row;
    config.clientSecret = decryptSecret(key, r.providerId, config.clientSecret) ?? "";
    return { ...r, oidcConfig: JSON.stringify(config) } as T;
  } catch {
    return row;
  }
}

interface ReadingAdapter {
  findOne(args: { model: string }): Promise<unknown>;
  findMany(args: { model: string }): Promise<unknown[]>;
  update(args: { model: string }): Promise<unknown>;
}

const WRAPPED = Symbol.for("quiver.sso.decrypting");

/**
 * Makes better-auth's adapter hand the plugin decrypted provider rows. Wrapped in place (the
 * adapter's identity keys better-auth's own schema check); every other model passes untouched.
 */
export function decryptProviderReads(adapter: object, key: Buffer, model = "ssoProvider"): void {
  const a = adapter as ReadingAdapter & { [WRAPPED]?: true };
  if (a[WRAPPED]) return;
  const { findOne, findMany, update } = a;
  a.findOne = async (args) => {
    const row = await findOne.call(a, args);
    return args.model === model ? decryptRow(key, row) : row;
  };
  a.findMany = async (args) => {
    const rows = await findMany.call(a, args);
    return args.model === model ? rows.map((r) => decryptRow(key, r)) : rows;
  };
  a.update = async (args) => {
    const row = await update.call(a, args);
    return args.model === model ? decryptRow(key, row) : row;
  };
  Object.defineProperty(a, WRAPPED, { value: true });
}
