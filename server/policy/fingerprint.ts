// Approval fingerprints. A rejection is remembered by the exact call (name + canonical
// arguments). A session approval is remembered by what it semantically covers: for a shell
// command, each simple command of the shared shell analysis cut to its arity (`npm test` covers
// `npm test -- --watch`, never `npm publish`; options before those words are read as the
// program reads them, arity.ts, and one it does not know narrows the approval to the exact
// command); a command with words known only at run time, an
// assignment or a dangerous flag is covered only by itself; an opaque command, or a write to a
// file that steers git, gets a key no approval grants. For a URL, its host — but for git_push the
// whole URL; otherwise the tool.
import { createHash } from "node:crypto";
import { analyseShell, type SimpleCommand } from "../shell/analyse";
import { isDangerous } from "../shell/danger";
import { steersGit } from "./git-paths";
import { subcommandWords } from "./arity";

/** JSON with object keys sorted, so equal arguments give equal bytes. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj)
    .filter((k) => obj[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`).join(",")}}`;
}

export function exactFingerprint(toolName: string, input: unknown): string {
  return createHash("sha256").update(toolName).update("\0").update(canonicalJson(input)).digest("hex");
}

// How many leading words name "the same command": `npm test` vs `npm publish` (2),
// `npm run build` vs `npm run deploy` (3). Unknown programs: the program alone (1).
const ARITY: Record<string, number> = {
  git: 2,
  npm: 2,
  pnpm: 2,
  yarn: 2,
  bun: 2,
  cargo: 2,
  go: 2,
  docker: 2,
  podman: 2,
  kubectl: 2,
  helm: 2,
  pip: 2,
  pip3: 2,
  uv: 2,
  poetry: 2,
  brew: 2,
  apt: 2,
  "apt-get": 2,
  gh: 2,
  deno: 2,
  dotnet: 2,
  mvn: 2,
  gradle: 2,
  terraform: 2,
  systemctl: 2,
  composer: 2,
  rustup: 2,
  make: 2,
  npx: 2,
  bunx: 2,
  pnpx: 2,
  node: 2,
  python: 2,
  python3: 2,
  ruby: 2,
  bundle: 2,
  rails: 2,
  aws: 3,
  gcloud: 3,
  az: 3,
  "npm run": 3,
  "npm exec": 3,
  "pnpm run": 3,
  "pnpm exec": 3,
  "yarn run": 3,
  "bun run": 3,
  "docker compose": 3,
  "git stash": 3,
  "git remote": 3,
  "git config": 3,
  "git worktree": 3,
  "gh pr": 3,
  "gh issue": 3,
  "gh repo": 3,
  "go mod": 3,
  "uv pip": 3,
  "uv run": 3,
  "poetry run": 3,
  "kubectl config": 3,
  "bundle exec": 3,
};

/**
 * The leading words of `argv` that an approval for the session covers: the program and its
 * sub-command words, found as the program reads them (arity.ts). Undefined when an option
 * before them may take a value or change what runs: then only the exact command is covered.
 */
export function arityPrefix(argv: readonly string[]): string[] | undefined {
  return subcommandWords(argv, (words) => {
    let arity = ARITY[words[0]] ?? 1;
    if (words.length >= 2 && ARITY[`${words[0]} ${words[1]}`] !== undefined) arity = ARITY[`${words[0]} ${words[1]}`];
    return arity;
  });
}

export interface CallFacts {
  tool: string;
  /** The shell command line, for tools that run one. */
  command?: string;
  /** URLs the call reaches. */
  urls?: string[];
  /** Files a write would make a folder a git repository or steer git with, and why. */
  gitPaths?: string[];
  /** A wrapper's steps, by tool (tool_transaction's edits and checks, tool_program's reads). */
  steps?: string[];
}

/**
 * The keys a session approval of this call grants, and that a later call must all hold to be
 * covered. Compound commands yield one key per simple command.
 */
export function sessionKeys(facts: CallFacts): string[] {
  if (facts.command !== undefined) {
    const analysis = analyseShell(facts.command);
    const keys = analysis.commands.map((c) => commandKey(facts.tool, c));
    // Approving `echo x > notes.txt` is not approving a write to every file: `> .git/config`.
    for (const t of analysis.writeTargets)
      keys.push(t.dynamic || steersGit(t.text) ? `${facts.tool}:opaque:> ${t.text}` : `${facts.tool}:write:${t.text}`);
    return keys.length > 0 ? [...new Set(keys)].sort() : [`${facts.tool}:cmd:`];
  }
  if (facts.gitPaths && facts.gitPaths.length > 0) return facts.gitPaths.map((p) => `${facts.tool}:opaque:${p}`).sort();
  // Approving a transaction of edits is approving edit steps, not the checks a later one runs.
  const steps = (facts.steps ?? []).filter((t) => !READ_STEPS.has(t));
  if (steps.length > 0) return [...new Set(steps.map((t) => `${facts.tool}:step:${t}`))].sort();
  // A push sends the person's code with their credential: approving one repository is not
  // approving every repository on its host (origin is the agent's to rewrite).
  if (WHOLE_URL.has(facts.tool) && facts.urls && facts.urls.length > 0)
    return [
      ...new Set(
        facts.urls.map((u) => (/[\x00-\x1f\x7f]/.test(u) ? `${facts.tool}:opaque:url` : `${facts.tool}:url:${u}`)),
      ),
    ].sort();
  const hosts = (facts.urls ?? []).map(hostOf).filter((h): h is string => !!h);
  if (hosts.length > 0) return [...new Set(hosts.map((h) => `${facts.tool}:host:${h}`))].sort();
  return [facts.tool];
}

const WHOLE_URL = new Set(["git_push"]);
const READ_STEPS = new Set(["read_file", "search_text", "list_files", "glob", "git_diff"]);

function commandKey(tool: string, c: SimpleCommand): string {
  if (c.opaque || c.argv.slice(1).some((a) => touchesGit(c.argv[0], a))) return `${tool}:opaque:${c.source}`;
  // `X=1 cmd`, `rm $f`, `rm -rf x`, `python3 -c …`: what they do depends on more than their first words.
  if (
    c.argv.length === 0 ||
    c.assignments.length > 0 ||
    c.words.some((w) => w.dynamic) ||
    c.runsCode ||
    isDangerous(c)
  ) {
    return `${tool}:exact:${[...c.assignments, ...c.argv].join(" ")}`;
  }
  const prefix = arityPrefix(c.argv);
  if (!prefix) return `${tool}:exact:${c.argv.join(" ")}`;
  return `${tool}:cmd:${prefix.join(" ")}`;
}

// An argument naming a file that steers git (`cp x .git/config`, `tee tools/HEAD`); to git
// itself only a path counts, so the revision `HEAD` is not one.
function touchesGit(program: string, arg: string): boolean {
  if (program === "git" && !arg.includes("/") && !arg.startsWith(".git")) return false;
  return steersGit(arg.slice(arg.indexOf("=") + 1));
}

/** A key no session approval grants: the call is asked about every time. */
export function isOpaqueKey(key: string): boolean {
  return /^[^:]+:opaque:/.test(key);
}

/** What a session approval covers, for the card: `npm test *`, `host example.com`. */
export function describeKeys(keys: string[]): string {
  return keys
    .map((k) => {
      const [, kind, rest] = /^[^:]+:(cmd|host|url|exact|opaque|write|step):(.*)$/s.exec(k) ?? [];
      if (kind === "write") return `writing ${rest}`;
      if (kind === "step") return `its ${rest} steps`;
      if (kind === "opaque") return `nothing more (\`${rest}\` is asked about every time)`;
      if (kind === "cmd") return `${rest} *`;
      if (kind === "exact") return `exactly \`${rest}\``;
      if (kind === "host") return `host ${rest}`;
      if (kind === "url") return `exactly ${rest}`;
      return `every ${k} call`;
    })
    .join(", ");
}

/**
 * What "Approve for this session" allows, one sentence per key in the person's words:
 * "Allow `echo` with any arguments for this session", "Allow exactly this command: rm -rf build".
 */
export function plainKeys(keys: string[]): string[] {
  return keys.map((k) => {
    const [, tool, kind, rest] = /^([^:]+):(cmd|host|url|exact|opaque|write|step):(.*)$/s.exec(k) ?? [];
    if (kind === "step") return `Allow ${tool} calls with \`${rest}\` steps for this session`;
    if (kind === "cmd")
      return rest
        ? `Allow \`${rest}\` with any arguments for this session`
        : `Allow ${tool} calls without a command for this session`;
    if (kind === "exact") return `Allow exactly this command: ${rest}`;
    if (kind === "write") return `Allow writing to ${rest} for this session`;
    if (kind === "host") return `Allow reaching ${rest} for this session`;
    if (kind === "url") return `Allow ${tool} to ${rest} (this URL only) for this session`;
    if (kind === "opaque") return `\`${rest}\` will still be asked about every time`;
    return `Allow every ${k} call for this session`;
  });
}

export function hostOf(url: string): string | undefined {
  try {
    // `evil.com.` is `evil.com`: one host, one session key.
    return new URL(url).hostname.toLowerCase().replace(/\.+$/, "") || undefined;
  } catch {
    return undefined;
  }
}

export function sessionFingerprint(keys: string[]): string {
  return keys.join("\n");
}

export function keysOfFingerprint(fingerprint: string): string[] {
  return fingerprint.split("\n").filter(Boolean);
}
