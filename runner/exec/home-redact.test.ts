// The redaction of the home's files bound back into the sandbox, spelling by spelling: every
// secret value goes, what the shell and git need stays byte for byte, and real bash still parses
// the result.
import { spawnSync } from "node:child_process";
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

/** Whether real bash parses `text` (`bash -n`). */
const parses = (text: string) => spawnSync("bash", ["-n"], { input: text }).status === 0;

describe("redactText, the spellings bash has beyond NAME=value", () => {
  it("printf -v, read and mapfile from a here-string or here-document, any declaration, ${…} and $'…' values, eval strings", () => {
    const cases: [string, string][] = [
      ["printf -v TOKEN '%s' s1; echo ok", `printf -v TOKEN ${R}; echo ok`],
      ["printf -v 'API_KEY' -- %s s2", `printf -v 'API_KEY' ${R}`],
      ["printf -vGH_PAT %s s3", `printf -vGH_PAT ${R}`],
      ['read -r TOKEN <<< "s4 s4"; echo ok', `read -r TOKEN <<< ${R}; echo ok`],
      ["IFS= read -r -p 'p: ' GH_PAT <<<$'s5\\ts5'", `IFS= read -r -p 'p: ' GH_PAT <<<${R}`],
      ['mapfile -t KEYS <<< "s6 s6"', `mapfile -t KEYS <<< ${R}`],
      ["read -r -d '' TOKEN <<'EOF'\ns7\nEOF\necho after", `read -r -d '' TOKEN <<'EOF'\n${R}\nEOF\necho after`],
      ["readarray KEYS <<-END\n\ts8\n\tEND\n", `readarray KEYS <<-END\n${R}\n\tEND\n`],
      ["declare -g API_KEY=s9", `declare -g API_KEY=${R}`],
      ["f() { local -r API_KEY=s10; typeset GH_PAT=s11; }", `f() { local -r API_KEY=${R}; typeset GH_PAT=${R}; }`],
      ["export -n API_KEY=s12; readonly DB_PASS=s13", `export -n API_KEY=${R}; readonly DB_PASS=${R}`],
      ["KEYS=(sk-s14 s15) ok=1", `KEYS=${R} ok=1`],
      ["declare -A API_KEYS=([a]='s 16' [b]=s17)", `declare -A API_KEYS=${R}`],
      ["export TOKEN=${X:-s18 s18} ok=1", `export TOKEN=${R} ok=1`],
      ['export DB_PASS=${DB_PASS:-"s19 }s19"}', `export DB_PASS=${R}`],
      ["export TOKEN=$'s20 \\' s20'; echo ok", `export TOKEN=${R}; echo ok`],
      ['eval "export TOKEN=s21"; echo "ok"', `eval "export TOKEN=${R}"; echo "ok"`],
      ["export TOKEN=$(cat <<'EOF'\nit's s22 (\nEOF\n)\necho after", `export TOKEN=${R}\necho after`],
      [
        "cat > ~/.npmrc <<EOF\n//r/:_authToken=s23\nEOF\necho ok",
        `cat > ~/.npmrc <<EOF\n//r/:_authToken=${R}\nEOF\necho ok`,
      ],
      // Not here-documents: an arithmetic shift, a comment, a here-string.
      ["echo $((1<<2)); export GH_TOKEN=s24", `echo $((1<<2)); export GH_TOKEN=${R}`],
      ["# don't <<EOF\nexport GH_TOKEN=s25\necho fine", `# don't <<EOF\nexport GH_TOKEN=${R}\necho fine`],
      ["cat <<< x\nexport GH_TOKEN=s26", `cat <<< x\nexport GH_TOKEN=${R}`],
      // A default or an assignment inside an expansion.
      [
        ': ${GH_TOKEN:=s27} "${API_KEY-s28 s28}"; X=${DB_PASS:-"s29"}',
        `: \${GH_TOKEN:=${R}} "\${API_KEY-${R}}"; X=\${DB_PASS:-${R}}`,
      ],
      ["export GOOD=${GH_TOKEN:-s30}; echo ok", `export GOOD=\${GH_TOKEN:-${R}}; echo ok`],
    ];
    for (const [text, want] of cases) {
      const out = redactText(".bashrc", text);
      expect(out, text).toBe(want);
      expect(out).not.toMatch(/\bs\d+\b/);
      expect(parses(out), out).toBe(parses(text));
    }
  });

  it("scripts of a PATH folder: by their #! as shell, or as key = value too; a quoted value keeps what follows", () => {
    expect(redactText("deploy", "#!/bin/sh\nexport DEPLOY_TOKEN=s1\necho ran\n", true)).toBe(
      `#!/bin/sh\nexport DEPLOY_TOKEN=${R}\necho ran\n`,
    );
    expect(redactText("tool", '#!/usr/bin/env perl\nmy $API_KEY = "s2"; print 1;\n', true)).toBe(
      `#!/usr/bin/env perl\nmy $API_KEY = "${R}"; print 1;\n`,
    );
    expect(redactText("tool", "#!/usr/bin/python3\nTOKEN = 's3'  # c\nX=1\n", true)).toBe(
      `#!/usr/bin/python3\nTOKEN = '${R}'  # c\nX=1\n`,
    );
    expect(redactText("config.toml", 'token = "s\\"4" # c\n')).toBe(`token = "${R}" # c\n`);
  });
});
