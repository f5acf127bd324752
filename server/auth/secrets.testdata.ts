// Secrets of every kind redact.ts knows, each in a line of ordinary text, with the part that
// must never reach a viewer (tests only).
export interface SecretCase {
  kind: string;
  /** The text as the agent wrote it. */
  text: string;
  /** What must not show, in whole or split. */
  secret: string;
}

const pemBody = "MIIBOgIBAAJBAKj34GkxFhD90vcNLYLInFEX6Ppy1tPf9Cnzj4p4WGeKLs1Pt8Qu";

export const SECRET_CASES: SecretCase[] = [
  {
    kind: "pem",
    text: `key:\n-----BEGIN RSA PRIVATE KEY-----\n${pemBody}\n-----END RSA PRIVATE KEY-----\ndone`,
    secret: pemBody,
  },
  { kind: "aws", text: "aws id AKIAIOSFODNN7EXAMPLE here", secret: "AKIAIOSFODNN7EXAMPLE" },
  {
    kind: "github",
    text: "token ghp_0123456789abcdefghijABCDEFGHIJ012345 ok",
    secret: "ghp_0123456789abcdefghijABCDEFGHIJ012345",
  },
  {
    kind: "github-pat",
    text: "pat github_pat_11ABCDEFG0123456789_abcdefghij ok",
    secret: "github_pat_11ABCDEFG0123456789_abcdefghij",
  },
  {
    kind: "anthropic",
    text: "use sk-ant-api03-abcdefghijklmnopqrstuvwxyz now",
    secret: "sk-ant-api03-abcdefghijklmnopqrstuvwxyz",
  },
  {
    kind: "openai",
    text: "openai sk-proj-abcdefghijklmnopqrstuvwxyz0123 set",
    secret: "sk-proj-abcdefghijklmnopqrstuvwxyz0123",
  },
  { kind: "bearer", text: "Authorization: Bearer abcdefghijklmnop.qrstuvwx sent", secret: "abcdefghijklmnop.qrstuvwx" },
  { kind: "url-password", text: "db postgres://quiver:s3cr3tpass@db.internal:5432/app up", secret: "s3cr3tpass" },
  { kind: "env", text: "export DB_PASSWORD=hunter2-horse-battery\nnext line", secret: "hunter2-horse-battery" },
  { kind: "quoted", text: 'cfg {"client_secret": "correct horse staple"} end', secret: "correct horse staple" },
];

/** Every way to cut `text` into 2 pieces, then into 3 (`step`: every step-th first cut). */
export function* splits(text: string, pieces: 2 | 3, step = 1): Generator<string[]> {
  if (pieces === 2) {
    for (let i = 1; i < text.length; i++) yield [text.slice(0, i), text.slice(i)];
    return;
  }
  for (let i = 1; i < text.length - 1; i += step) {
    for (let j = i + 1; j < text.length; j++) yield [text.slice(0, i), text.slice(i, j), text.slice(j)];
  }
}

/** Whether any part of `secret` longer than `min` characters shows in `text`. */
export function leaks(text: string, secret: string, min = 6): string | undefined {
  for (let i = 0; i + min <= secret.length; i++) {
    const part = secret.slice(i, i + min);
    if (text.includes(part)) return part;
  }
  return undefined;
}
