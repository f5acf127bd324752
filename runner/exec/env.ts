// The environment a command sees: the runner's own, minus anything that looks like a credential
// (the runner's token, provider keys, URLs with passwords) and Quiver's own settings, plus a few settings that keep tools non-interactive.

const SECRET_NAME = /KEY|SECRET|TOKEN|PASSWORD|PASSWD|CREDENTIAL/i;
// Shorter names for the same, as a whole word of the name only (GIT_AUTHOR_NAME is no AUTH):
// DB_PASS, GH_PAT, SENTRY_DSN, npm_config__auth (npm's registry password), SESSION_COOKIE.
const SECRET_WORD = /(^|_)(AUTH|PASS|PAT|DSN|COOKIE)(_|$)/i;
// Quiver's own settings (the server's and the runner's: where its MCP configuration, data and
// hidden folders are, its limits) are none of a command's business, and name files worth reading.
const QUIVER_OWN = /^QUIVER_/;
// DATABASE_URL=postgres://user:pw@host carries a password under an innocent name, anywhere in
// the value; an http(s) URL a token with no password (https://ghp_…@github.com/…).
const URL_WITH_PASSWORD = /[a-z][a-z0-9+.-]*:\/\/[^/\s:@]*:[^/\s@]+@|https?:\/\/[^/\s@]+@/i;

export interface EnvOptions {
  /** Variable names kept even though they look secret (exact, case-sensitive). */
  allow?: readonly string[];
  /** Added after scrubbing (not scrubbed: the runner chose them). */
  extra?: Record<string, string>;
}

export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name) || SECRET_WORD.test(name);
}

export function scrubEnv(base: NodeJS.ProcessEnv, options: EnvOptions = {}): Record<string, string> {
  const allow = new Set(options.allow ?? []);
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(base)) {
    if (value === undefined) continue;
    if ((isSecretName(name) || URL_WITH_PASSWORD.test(value) || QUIVER_OWN.test(name)) && !allow.has(name)) continue;
    out[name] = value;
  }
  return { ...out, ...options.extra };
}

/** Settings for commands the agent runs: no pagers or prompts waiting on a stdin that is /dev/null. */
export const NON_INTERACTIVE_ENV: Record<string, string> = {
  PAGER: "cat",
  GIT_PAGER: "cat",
  GIT_TERMINAL_PROMPT: "0",
  TERM: "dumb",
  NO_COLOR: "1",
  DEBIAN_FRONTEND: "noninteractive",
};
