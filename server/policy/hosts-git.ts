// Where git connects, as git 2.39 reads its line: a repository in its scp-like form
// (`git clone git@evil.com:r`) or as a URL, also as an option's value (`archive
// --remote=evil.com:r`), and the config a line sets with `-c KEY=VALUE`, `clone -c` or `git
// config KEY VALUE` (which a later git on the line, or a later line, obeys): a remote's
// `url`/`pushurl`, a `url.<base>.insteadOf` whose base replaces what the line names, any
// `*.proxy` (`http.proxy`, `http.<url>.proxy`, `remote.<n>.proxy`; git reads no `https.proxy`,
// counted all the same) and `http.curloptResolve`. Keys are matched in any case, as git does.
// An `ext::` remote runs the command its URL spells (words split on blanks, `% ` a blank), read
// here as a script. The command strings git hands a shell (`core.sshCommand`, `--upload-pack`)
// are listed as commands by the shell analysis (shell/git-code.ts), so their hosts are read there.
import type { SimpleCommand, Word } from "../shell/types";
import {
  asUrl,
  assignmentParts,
  hostUrl,
  resolveTo,
  SCHEME,
  staticTexts,
  type Nested,
  type Reach,
} from "./hosts-reach";

// git's commands that take a repository, and its scp-like form of one (`git@evil.com:r.git`): a
// name with a dot (an address in brackets, or one number the resolver reads as an IPv4 address:
// `2852039166:r`) before the first colon, no slash before it. A
// refspec (`main:evil.com`) has no dot before its colon; a local path has a slash first.
const GIT_REMOTE_COMMANDS = new Set([
  "clone",
  "fetch",
  "pull",
  "push",
  "ls-remote",
  "remote",
  "submodule",
  "archive",
  "fetch-pack",
  "send-pack",
]);
const SCP_LIKE = /^((?:[^@/:\s]+@)?(?:[a-z0-9_-]+(?:\.[a-z0-9_-]+)+|\[[0-9a-f:.]+\]|\d{6,}|0x[0-9a-f]+)):(?!\/\/)/i;
// A URL's base with no scheme, whose host a rewrite puts in front of the rest (`evil.com:`).
const BARE_HOST = /^(?:[^@/:\s]+@)?([a-z0-9_-]+(?:\.[a-z0-9_-]+)+|\[[0-9a-f:.]+\])/i;

const GLOBAL_VALUE = ["-C", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--config-env"];

/** `ext::CMD ARGS` as shell text: git splits on blanks itself, `% ` is a blank and `%%` a
 *  percent, `%s`/`%S` the service; each word is quoted so the script has the same words. */
function extCommand(url: string): string {
  const words: string[] = [""];
  const body = url.slice(5);
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (c === " ") words.push("");
    else if (c === "%" && i + 1 < body.length) {
      const n = body[++i];
      words[words.length - 1] += n === " " || n === "%" ? n : /[sS]/.test(n) ? "git-upload-pack" : "";
    } else words[words.length - 1] += c;
  }
  return words
    .filter(Boolean)
    .map((w) => `'${w.replace(/'/g, `'\\''`)}'`)
    .join(" ");
}

/** The URLs a repository as written reaches (`git@evil.com:r`, `https://…`, `ext::…`). */
function repository(text: string, nested: Nested, bare = false): Reach {
  if (/^ext::/i.test(text)) return nested(extCommand(text));
  if (SCHEME.test(text)) return { urls: [text] };
  const m = SCP_LIKE.exec(text);
  if (m) return { urls: [`ssh://${m[1]}`] };
  const b = bare ? BARE_HOST.exec(text) : null;
  const url = b ? hostUrl(b[1]) : undefined;
  return { urls: url ? [url] : [] };
}

/** What one config setting makes git reach; nothing for a key that names no host. */
export function configReach(key: string, value: string, nested: Nested): Reach {
  const k = key.toLowerCase();
  if (/^(remote\..+\.(url|pushurl)|submodule\..+\.url)$/.test(k)) return repository(value, nested);
  const base = /^url\.(.+)\.(insteadof|pushinsteadof)$/i.exec(key);
  if (base) return repository(base[1], nested, true);
  if (/\.proxy$/.test(k) && value.trim() !== "") return { urls: [asUrl(value.trim())] };
  if (/^http\.(.+\.)?curloptresolve$/.test(k)) return { urls: resolveTo(value).map(asUrl) };
  return { urls: [] };
}

// The value a prefix assignment gives `name` (`PX=evil.com git --config-env=http.proxy=PX …`).
const assignedValue = (assignments: readonly string[], name: string) =>
  assignments.flatMap((a) => {
    const set = assignmentParts(a, true);
    return set?.name === name ? set.values : [];
  })[0];

const merge = (into: Reach, r: Reach) => {
  into.urls.push(...r.urls);
  into.unsure ??= r.unsure;
};

// `git config [options] KEY VALUE`: each word is tried as a key with the next as its value.
function configPairs(words: readonly string[], nested: Nested): Reach {
  const out: Reach = { urls: [] };
  for (let i = 0; i + 1 < words.length; i++)
    if (!words[i].startsWith("-")) merge(out, configReach(words[i], words[i + 1], nested));
  return out;
}

// `KEY=VALUE`, as `-c` and `clone -c` give it.
const setting = (kv: string, nested: Nested): Reach => {
  const eq = kv.indexOf("=");
  return eq > 0 ? configReach(kv.slice(0, eq), kv.slice(eq + 1), nested) : { urls: [] };
};

/** git: the repositories its words name and the hosts the config it sets on the line names. */
export function gitReach(cmd: SimpleCommand, nested: Nested): Reach {
  const args = cmd.words.slice(1);
  const out: Reach = { urls: [] };
  let at = 0;
  for (; at < args.length && args[at].text.startsWith("-"); at++) {
    const w = args[at].text;
    if (w === "-c" && args[at + 1] && !args[at + 1].dynamic) merge(out, setting(args[at + 1].text, nested));
    // `--config-env=KEY=VAR`: the value is the variable's, set on the line or not.
    const env = /^--config-env=(.+)$/.exec(w)?.[1] ?? (w === "--config-env" ? args[at + 1]?.text : undefined);
    const eq = env?.lastIndexOf("=") ?? -1;
    if (env && eq > 0) {
      const value = assignedValue(cmd.assignments, env.slice(eq + 1));
      if (value !== undefined) merge(out, configReach(env.slice(0, eq), value, nested));
    }
    if (w === "-c" || GLOBAL_VALUE.includes(w)) at++;
  }
  const sub = args[at]?.dynamic ? undefined : args[at]?.text;
  const rest = args.slice(at + 1);
  if (sub === "config") merge(out, configPairs(staticTexts(rest), nested));
  if (sub === "clone") {
    // `-c KV`, `-qcKV`, `--config=KV`, `--config KV` (or a prefix of it git accepts).
    for (let i = 0; i < rest.length; i++) {
      const t = rest[i].dynamic ? "" : rest[i].text;
      const m = /^(?:-[a-zA-Z]*c|--con(?:f(?:ig?)?)?(?:=|$))(.*)$/s.exec(t);
      if (!m) continue;
      const kv = m[1] !== "" || /[=]$/.test(t) ? m[1] : rest[++i] && !rest[i].dynamic ? rest[i].text : "";
      merge(out, setting(kv, nested));
    }
  }
  if (args.some((w) => !w.dynamic && GIT_REMOTE_COMMANDS.has(w.text))) {
    // Every word and option value that is a repository: `--remote=evil.com:r`, `--repo …`.
    for (const text of staticTexts(rest as Word[]))
      for (const t of text.startsWith("--") ? [text.slice(text.indexOf("=") + 1)] : [text])
        if (!t.startsWith("-")) merge(out, repository(t, nested));
  }
  return out;
}
