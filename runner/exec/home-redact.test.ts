// The redaction of the home's files bound back into the sandbox, spelling by spelling: every
// secret value goes, what the shell and git need stays byte for byte.
import { describe, expect, it } from "vitest";
import { REDACTED, redactText } from "./home-redact";

const R = REDACTED;

describe("redactText", () => {
  it("shell files: each way of assigning a secret variable, and secrets in aliases and URLs", () => {
    const cases: [string, string][] = [
      ['export  GITHUB_TOKEN="s1"; export FOO=bar', `export  GITHUB_TOKEN=${R}; export FOO=bar`],
      ["declare -x OPENAI_API_KEY=s2", `declare -x OPENAI_API_KEY=${R}`],
      ["typeset -gx AUTH=s3", `typeset -gx AUTH=${R}`],
      ["set -a; DB_PASS='s 4' ; set +a", `set -a; DB_PASS=${R} ; set +a`],
      ["export AWS_SECRET_ACCESS_KEY=\\\ns5\necho next", `export AWS_SECRET_ACCESS_KEY=${R}\necho next`],
      ['readonly NPM_TOKEN="$(pass show npm | head -1)" X=1', `readonly NPM_TOKEN=${R} X=1`],
      ["TOKENS=(a b c); echo ok", `TOKENS=${R}; echo ok`],
      ["API_KEYS[0]=s6", `API_KEYS[0]=${R}`],
      ["alias gh2='GH_TOKEN=s7 gh'", `alias gh2='GH_TOKEN=${R} gh'`],
      ["alias gh3='GH_TOKEN=s8'; alias ok='echo \"x\"'", `alias gh3='GH_TOKEN=${R}'; alias ok='echo "x"'`],
      [`alias d='curl -H "Authorization: Bearer s9" x'`, `alias d='curl -H "Authorization: Bearer ${R}" x'`],
      ["export HUB=ghp_abcdefghijklmnopqrstuvwxyz0123", `export HUB=${R}`],
      ["export DATABASE_URL=postgres://app:s10@db/app", `export DATABASE_URL=postgres://app:${R}@db/app`],
      ['export PATH="$HOME/bin:$PATH"; alias ll="ls -l"', 'export PATH="$HOME/bin:$PATH"; alias ll="ls -l"'],
    ];
    for (const [text, want] of cases) expect(redactText(".bashrc", text)).toBe(want);
  });

  it("configuration files: secret keys, extraheader, URL userinfo; git's identity intact", () => {
    const gitconfig = [
      "[user]",
      "\tname = Fake Person",
      "\temail = fake@example.com",
      '[url "https://x:s1@github.com/"]',
      "\tinsteadOf = https://github.com/",
      '[url "https://s2@gitlab.com/"]',
      "[http]",
      "\textraheader = X-Custom: s3",
      "[credential]\r",
      "\thelper = store\r",
    ].join("\n");
    const out = redactText(".gitconfig", gitconfig);
    expect(out).not.toMatch(/s[123]\b/);
    expect(out).toContain("\tname = Fake Person\n\temail = fake@example.com\n");
    expect(out).toContain(`[url "https://x:${R}@github.com/"]`);
    expect(out).toContain(`\textraheader = ${R}\n`);
    expect(out).toContain("\thelper = store\r");
    expect(redactText("config.toml", '[registries.x]\ntoken = "s4"\n')).toBe(`[registries.x]\ntoken = "${R}"\n`);
    expect(redactText("npmrc", "//r.example/:_authToken=s5\n_auth=s6\n_password=s7\nregistry=https://r/\n")).toBe(
      `//r.example/:_authToken=${R}\n_auth=${R}\n_password=${R}\nregistry=https://r/\n`,
    );
    expect(redactText("pip.conf", "index-url = https://u:s8@p/simple")).toBe(`index-url = https://u:${R}@p/simple`);
    expect(redactText("x", "a\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3Bl\n-----END OPENSSH PRIVATE KEY-----\nz")).toBe(
      `a\n${R}\nz`,
    );
    expect(redactText("hosts.yml", "  oauth_token: s9\n  user: me")).toBe(`  oauth_token: ${R}\n  user: me`);
  });
});
