// Every environment variable Quiver reads, validated once at boot. A bad value stops the start
// with one line naming the variable; nothing else in the server reads process.env.
import { resolve } from "node:path";
import { isIP } from "node:net";
import { z } from "zod";
import { parsePrices } from "./engine/pricing/parse";
import { LogLevelName } from "./protocol/log-line";
import { loadBoundTokens, type ConfiguredToken } from "./executors/runner/bound-tokens";

const port = z.coerce.number().int().min(0).max(65535);
const size = z.string().regex(/^\s*\d+(\.\d+)?\s*[kmgt]?i?b?\s*$/i, "must be a size such as 4g, 256m, or 0 for none");
const count = z.string().regex(/^\d+$/, "must be a whole number, 0 for none");
const url = (protocols: string[]) =>
  z.string().refine(
    (v) => {
      try {
        return protocols.includes(new URL(v).protocol);
      } catch {
        return false;
      }
    },
    `must be a URL (${protocols.join(" or ")})`,
  );

/** "a, b,,c" → ["a", "b", "c"]. */
const commaList = (v: string): string[] =>
  v
    .split(",")
    .map((item) => item.trim())
    .filter(Boolean);

export const envSchema = z.object({
  NODE_ENV: z.enum(["development", "production", "test"]).default("production"),
  PORT: port.default(3000),
  /** Interface to bind. Embedded single-user mode never leaves loopback. */
  HOST: z.string().default("127.0.0.1"),
  /** Host names the server answers to (DNS-rebinding guard); "*" for any. */
  QUIVER_ALLOWED_HOSTS: z.string().default("localhost,127.0.0.1,::1").transform(commaList),
  QUIVER_DATA_DIR: z.string().default(".quiver"),
  /** Unset: SQLite under the data folder. A postgres:// URL switches to PostgreSQL. */
  DATABASE_URL: url(["postgres:", "postgresql:", "file:"]).optional(),
  /** Workspace the local runner serves; default <data>/workspace. */
  QUIVER_WORKSPACE: z.string().optional(),
  /** "0" to not spawn the local runner (runners connect from elsewhere with QUIVER_RUNNER_TOKEN or QUIVER_RUNNER_TOKENS). */
  QUIVER_LOCAL_RUNNER: z.enum(["0", "1"]).default("1"),
  /** Shared secret for remote runners; the local runner gets a fresh random one per start. */
  QUIVER_RUNNER_TOKEN: z.string().min(16, "must be at least 16 characters").optional(),
  /** Remote runners' own tokens, `<runner id>=<token>,…`: each connects only as its id, which no
   *  other token (the shared one included) may claim. Checked in parseEnv (runnerBindings). */
  QUIVER_RUNNER_TOKENS: z.string().optional(),
  /** The same pairs, one a line (`#` comments), in a file only its owner may read (chmod 600). */
  QUIVER_RUNNER_TOKENS_FILE: z
    .string()
    .transform((v) => resolve(v))
    .optional(),
  QUIVER_PROVIDER: z.enum(["anthropic", "openai"]).optional(),
  QUIVER_MODEL: z.string().min(1).optional(),
  /** The model's context window in tokens, when the built-in guess for its name is wrong
   *  (local models especially); the conversation is summarized as it nears it. */
  QUIVER_CONTEXT_WINDOW: z.coerce.number().int().min(1024, "must be at least 1024 tokens").optional(),
  ANTHROPIC_API_KEY: z.string().min(1).optional(),
  ANTHROPIC_BASE_URL: url(["http:", "https:"]).optional(),
  OPENAI_API_KEY: z.string().min(1).optional(),
  OPENAI_BASE_URL: url(["http:", "https:"]).optional(),
  /** Model prices (dollars per million tokens) over the built-in table (engine/pricing): the JSON
   *  itself or a JSON file's path, { "model": { "input", "output", "cacheRead"?, "cacheWrite"? } }. */
  QUIVER_PRICES: z
    .string()
    .transform((v, ctx) => {
      const r = parsePrices(v);
      if (r.ok) return r.table;
      ctx.addIssue({ code: "custom", message: r.message });
      return z.NEVER;
    })
    .optional(),
  QUIVER_LOG_LEVEL: LogLevelName.default("info"),
  /** Free space in the data folder below which /api/health reports a problem (and the IDE shows it). */
  QUIVER_MIN_FREE_DISK_MB: z.coerce.number().int().min(0).default(500),
  /** Minutes a terminal keeps running with no page of its session attached (a dev server in it
   *  keeps serving meanwhile); then its shell is closed and its tab says so. */
  QUIVER_TERMINAL_IDLE_MINUTES: z.coerce
    .number()
    .min(0.01, "must be more than 0")
    .max(7 * 24 * 60, "must be at most a week (10080)")
    .default(60),
  /** Bytes of a command's output stored whole for retrieve_tool_result; past it only its last MiB. */
  QUIVER_OUTPUT_CEILING_BYTES: z.coerce
    .number()
    .int()
    .min(1_000_000, "must be at least 1000000")
    .max(1_000_000_000, "must be at most 1000000000")
    .default(64 * 1024 * 1024),
  /** Bytes of full outputs one session keeps for retrieve_tool_result at once (its spills, until
   *  they expire after 7 days); past it a cut result's full output is not kept and the model is told. */
  QUIVER_OUTPUT_SESSION_BYTES: z.coerce
    .number()
    .int()
    .min(1_000_000, "must be at least 1000000")
    .max(1_000_000_000_000, "must be at most 1000000000000")
    .default(1024 * 1024 * 1024),
  /** The local runner's sandbox: auto, off (unsandboxed on purpose) or require. Checked here so
   *  a typo stops the server, not only its runner; the runner reads it (runner/exec). */
  QUIVER_SANDBOX: z.enum(["auto", "off", "require"]).optional(),
  /** Resource limits per command and terminal, read by the runner (runner/exec/limits.ts). */
  QUIVER_LIMIT_MEMORY: size.optional(),
  QUIVER_LIMIT_PROCESSES: count.optional(),
  QUIVER_LIMIT_CPU_SECONDS: count.optional(),
  QUIVER_LIMIT_FILE_SIZE: size.optional(),
  /** Accounts (server/auth/accounts): "accounts" turns them on now; unset, they are on once the
   *  first account exists, and always with HOST off loopback. */
  QUIVER_AUTH: z.enum(["accounts"], "must be accounts (or unset)").optional(),
  /** Who may create an account once accounts are on: "invite" (an org's invitation) or "open" (anyone, with an org of their own). */
  QUIVER_SIGNUP: z.enum(["invite", "open"]).default("invite"),
  /** Mail (password reset links, invitations) by SMTP: smtp://user:pass@host:587 or smtps://…; unset: written to the log. */
  QUIVER_SMTP_URL: url(["smtp:", "smtps:"]).optional(),
  /** The From of that mail. */
  QUIVER_MAIL_FROM: z.string().min(3).optional(),
  /** Origins of OpenID Connect identity providers on loopback or a private network that org
   *  admins may use for single sign-on (comma-separated, e.g. http://keycloak.internal:8080);
   *  public https issuers need no listing. */
  QUIVER_SSO_PRIVATE_ISSUERS: z
    .string()
    .default("")
    .transform(commaList)
    .pipe(z.array(url(["http:", "https:"]).transform((o) => new URL(o).origin))),
  /** DNS servers (`ip` or `ip:port`, comma-separated) that look up the TXT records proving an org's
   *  SSO email domains; unset: the machine's own resolvers. */
  QUIVER_SSO_DNS_SERVERS: z
    .string()
    .default("")
    .transform(commaList)
    .pipe(z.array(z.string().refine(isDnsServer, "each must be an IP address, with :port if not 53 ([v6]:port)"))),
  /** JSON file of MCP servers ({ "mcpServers": {...} }); a bad file is logged, never fatal. */
  QUIVER_MCP_CONFIG: z
    .string()
    .transform((v) => resolve(v))
    .optional(),
});

export type Env = z.infer<typeof envSchema> & {
  dataDir: string;
  workspaceDir: string;
  /** QUIVER_RUNNER_TOKENS and QUIVER_RUNNER_TOKENS_FILE's pairs, checked against each other. */
  runnerBindings: ConfiguredToken[];
};

// Their values are never repeated in an error: it is written to the terminal and the log.
const SECRET = new Set([
  "QUIVER_RUNNER_TOKEN",
  "QUIVER_RUNNER_TOKENS",
  "ANTHROPIC_API_KEY",
  "OPENAI_API_KEY",
  "QUIVER_SMTP_URL",
]);

export class EnvError extends Error {}

export function parseEnv(source: Record<string, string | undefined> = process.env): Env {
  // Empty strings mean "unset": shells and .env files produce them for cleared variables.
  const cleaned = Object.fromEntries(Object.entries(source).filter(([, v]) => v !== undefined && v !== ""));
  const parsed = envSchema.safeParse(cleaned);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const name = String(issue.path[0] ?? "environment");
    const got = SECRET.has(name) ? "" : ` (got ${JSON.stringify(cleaned[name] ?? "")})`;
    throw new EnvError(`Invalid ${name}: ${issue.message}${got}`);
  }
  const bound = loadBoundTokens({
    inline: parsed.data.QUIVER_RUNNER_TOKENS,
    file: parsed.data.QUIVER_RUNNER_TOKENS_FILE,
    shared: parsed.data.QUIVER_RUNNER_TOKEN,
  });
  if (!bound.ok) throw new EnvError(`Invalid ${bound.variable}: ${bound.message}`);
  const dataDir = resolve(parsed.data.QUIVER_DATA_DIR);
  return {
    ...parsed.data,
    dataDir,
    workspaceDir: resolve(parsed.data.QUIVER_WORKSPACE ?? resolve(dataDir, "workspace")),
    runnerBindings: bound.bindings,
  };
}

/** HOST names only this machine: 127.x, ::1, localhost. Anything else needs accounts. */
export function isLoopbackHost(host: string): boolean {
  const h = host.startsWith("::ffff:") ? host.slice(7) : host;
  return h === "localhost" || h === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

let current: Env | undefined;
/** The validated environment of this process (parsed on first use). */
export function env(): Env {
  return (current ??= parseEnv());
}

/** `1.2.3.4`, `1.2.3.4:5353`, `::1` or `[::1]:5353`: what node's DNS resolver takes as a server. */
function isDnsServer(text: string): boolean {
  const bracketed = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(text);
  const [host, port] = bracketed
    ? [bracketed[1], bracketed[2]]
    : text.split(":").length === 2
      ? text.split(":")
      : [text, undefined];
  if (port !== undefined && !(Number(port) >= 1 && Number(port) <= 65535)) return false;
  return isIP(host) !== 0;
}
